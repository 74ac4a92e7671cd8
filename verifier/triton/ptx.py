"""Triton's PTX, read as a program: every shared-memory instruction of a kernel with the byte
address each thread of the CTA gives it, evaluated from ``%tid`` through the integer arithmetic
Triton's lowering emitted. Scratch (reductions, scans, layout conversions) has no layout in the
TTGIR; its layout is whatever this code computes, so it is read from the code itself.

Registers defined once whose inputs are known get one value per thread; anything else (kernel
parameters, loaded data, values carried around a loop) is unknown, and so is an address or a
predicate computed from it. Control flow: blocks are active for the threads whose known branch
conditions lead there (a branch on an unknown value leads both ways, and the instruction is marked
``conditional``); loops are found from backward branches.

>>> k = parse_kernel('''
... .visible .entry k(.param .u64 k_param_0)
... .reqntid 64
... {
...   mov.u32 %r1, %tid.x;
...   and.b32 %r2, %r1, 31;
...   setp.eq.s32 %p1, %r2, 0;
...   shl.b32 %r3, %r1, 2;
...   mov.b32 %r4, global_smem;
...   add.s32 %r5, %r4, %r3;
...   @%p1 st.shared.b32 [%r5+16], %r2;
...   ld.shared.v4.b32 {%r6, %r7, %r8, %r9}, [%r4];
... }''')
>>> [(op.name, op.family, int(op.active.sum()), int(op.offsets[1][0])) for op in shared_ops(k)]
[('st32', 'lsu', 2, 144), ('ld128', 'lsu', 64, 0)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

Location = tuple[str, int, int]  # (source file name, line, column)

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)
_LABEL = re.compile(r"^\s*([$\w]+):")
_PRED = re.compile(r"^@(!?)(%?[\w$]+)\s+")
_MEM = re.compile(r"\[\s*([^\]]*?)\s*\]")
MASK32 = (1 << 32) - 1


@dataclass
class Instruction:
    """One PTX instruction of the kernel body."""

    index: int
    line: int  # 1-based line in the PTX text
    opcode: str
    operands: list[str]
    guard: tuple[bool, str] | None  # (negated, predicate register)
    loc: Location  # the kernel's own source location (outermost of an inlined chain)
    scope: int = 0  # inline-asm brace scope (registers declared inside are local to it)


@dataclass
class Kernel:
    """A parsed kernel: its name, parameters, threads per CTA and instructions."""

    name: str
    params: list[tuple[str, str]]  # (type, name)
    threads: int
    body: list[Instruction]
    labels: dict[str, int]  # label -> index of the next instruction
    shared_bytes: int = 0  # static .shared declarations (Triton uses dynamic global_smem)


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _loc(rest: str, files: dict[str, str]) -> Location | None:
    """``.loc F L C[, function_name ..., inlined_at F2 L2 C2]``: the outermost location."""
    parts = rest.split("inlined_at")
    f, ln, col = (
        parts[-1].replace(",", " ").split()[:3] if len(parts) > 1 else rest.replace(",", " ").split()[:3]
    )
    try:
        return (files.get(f, f), int(ln), int(col))
    except ValueError:
        return None


def parse_kernel(ptx: str) -> Kernel:
    """The first ``.entry`` of a PTX module (Triton writes one per module)."""
    files = {n: path.rsplit("/", 1)[-1] for n, path in _FILE.findall(ptx)}
    m = _ENTRY.search(ptx)
    if not m:
        raise ValueError("no .entry in the PTX")
    params = []
    for p in m.group(2).split(","):
        words = p.split()
        if len(words) >= 3 and words[0] == ".param":
            params.append((words[1].lstrip("."), words[-1]))
    rest = ptx[m.end() :]
    threads = 1
    for key in (".reqntid", ".maxntid"):
        t = re.search(re.escape(key) + r"\s+([\d,\s]+)", rest[: rest.find("{")])
        if t:
            threads = int(np.prod([int(x) for x in t.group(1).replace(",", " ").split()]))
            break
    start = ptx.count("\n", 0, m.end() + rest.find("{")) + 1
    body_text = rest[rest.find("{") + 1 :]
    body: list[Instruction] = []
    labels: dict[str, int] = {}
    where: Location = ("", 0, 0)
    depth, scope, scopes = 0, 0, [0]
    pending = ""
    for n, raw in enumerate(body_text.splitlines(), start=start):
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line.startswith(".loc"):
            where = _loc(line[4:], files) or where
            continue
        if line == "{":
            depth += 1
            scope += 1
            scopes.append(scope)
            continue
        if line == "}":
            if depth == 0:
                break
            depth -= 1
            scopes.pop()
            continue
        lab = _LABEL.match(line)
        if lab and not pending:
            labels[lab.group(1)] = len(body)
            line = line[lab.end() :].strip()
            if not line:
                continue
        if line.startswith("."):
            continue
        pending += " " + line
        if not pending.rstrip().endswith(";"):
            continue
        text, pending = pending.strip().rstrip(";").strip(), ""
        guard = None
        g = _PRED.match(text)
        if g:
            guard = (g.group(1) == "!", g.group(2))
            text = text[g.end() :]
        parts = text.split(None, 1)
        body.append(
            Instruction(
                len(body),
                n,
                parts[0],
                _split_operands(parts[1]) if len(parts) > 1 else [],
                guard,
                where,
                scopes[-1],
            )  # fmt: skip
        )
    return Kernel(m.group(1), params, threads, body, labels)


# ----- evaluation --------------------------------------------------------------------------------
_SREG = {"%tid.x": "tid", "%laneid": "lane"}
_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}  # fmt: skip
_DEST_LESS = ("st", "stmatrix", "bar", "barrier", "bra", "cp", "mbarrier", "fence", "tensormap", "ret",
              "red", "wgmma", "tcgen05", "prefetch", "membar", "exit", "trap", "griddepcontrol")  # fmt: skip


def _width(opcode: str) -> int:
    for part in reversed(opcode.split(".")):
        if part[:1] in "usbf" and part[1:].isdigit():
            return int(part[1:])
    return 32


def _signed(opcode: str) -> bool:
    return any(p[:1] == "s" and p[1:].isdigit() for p in opcode.split("."))


def _reg(name: str, scope: int, local: set[tuple[int, str]]) -> str:
    return f"{name}@{scope}" if (scope, name) in local else name


class _Machine:
    """Per-thread values of single-definition registers."""

    def __init__(self, kernel: Kernel):
        self.k = kernel
        tid = np.arange(kernel.threads, dtype=np.int64)
        self.tid = tid
        self.vals: dict[str, np.ndarray] = {}
        self.defs: dict[str, int] = {}
        self.local: set[tuple[int, str]] = set()
        signatures: dict[str, set] = {}
        for ins in kernel.body:
            for d in self._dests(ins):
                signatures.setdefault(d, set()).add((ins.opcode, tuple(ins.operands), ins.guard))
        # a register written in several places by the same unguarded instruction (LLVM duplicates
        # blocks) holds one value whichever way control went
        self.guarded: set[str] = set()
        for d, sig in signatures.items():
            self.defs[d] = len({(op, ops) for op, ops, _ in sig})
            if any(g is not None for _, _, g in sig):
                self.guarded.add(d)
        self.cand: dict[str, dict[tuple, np.ndarray]] = {}

    def _dests(self, ins: Instruction) -> list[str]:
        base = ins.opcode.split(".")[0]
        if base in _DEST_LESS or not ins.operands:
            return []
        first = ins.operands[0]
        if base in ("ld", "ldmatrix", "shfl", "tcgen05", "wgmma", "atom"):
            names = re.findall(r"%[\w$]+", first.split("|")[0])
        else:
            names = re.findall(r"%[\w$]+", first)
        if ins.opcode.startswith("setp") and "|" in first:
            names = re.findall(r"%[\w$]+", first)
        return [_reg(n, ins.scope, self.local) for n in names]

    def value(self, op: str, scope: int = 0) -> np.ndarray | None:
        op = op.strip()
        if op in _SREG:
            return self.tid.copy() if _SREG[op] == "tid" else self.tid % 32
        if op.startswith("%tid.") or op.startswith("%ntid.") or op.startswith("%ctaid"):
            return np.zeros_like(self.tid) if op.startswith(("%tid.", "%ctaid")) else None
        if op == "global_smem":
            return np.zeros_like(self.tid)
        if op.startswith("%"):
            return self.vals.get(_reg(op, scope, self.local))
        try:
            if op.startswith(("0f", "0d")):
                return None
            return np.full_like(self.tid, int(op, 0))
        except ValueError:
            return None

    def address(self, operand: str, scope: int) -> np.ndarray | None:
        m = _MEM.search(operand)
        if not m:
            return None
        total = np.zeros_like(self.tid)
        for term in re.split(r"\s*\+\s*", m.group(1)):
            v = self.value(term, scope)
            if v is None:
                return None
            total = total + v
        return total

    def predicate(self, ins: Instruction) -> np.ndarray | None:
        if ins.guard is None:
            return np.ones(self.k.threads, dtype=bool)
        v = self.value(ins.guard[1], ins.scope)
        if v is None:
            return None
        p = v.astype(bool)
        return ~p if ins.guard[0] else p

    def step(self, ins: Instruction) -> None:
        """Evaluate one instruction. A register written in several places holds one known value
        only when every write computes the same value for every thread (LLVM duplicates blocks
        and recomputes thread indices); guarded writes make it unknown."""
        dests = self._dests(ins)
        if len(dests) != 1 or dests[0] in self.guarded or dests[0] in self.vals:
            return
        srcs = [self.value(o, ins.scope) for o in ins.operands[1:]]
        out = _compute(ins.opcode, srcs, ins.operands[1:])
        if out is None:
            return
        d = dests[0]
        cands = self.cand.setdefault(d, {})
        cands[(ins.opcode, tuple(ins.operands))] = out
        if len(cands) == self.defs[d]:
            vals = list(cands.values())
            if all(np.array_equal(vals[0], v) for v in vals[1:]):
                self.vals[d] = vals[0]


def _compute(opcode: str, s: list[np.ndarray | None], raw: list[str]) -> np.ndarray | None:
    parts = opcode.split(".")
    base = parts[0]
    w = _width(opcode)
    mask = (1 << w) - 1 if w < 64 else -1

    def known(n: int) -> bool:
        return len(s) >= n and all(x is not None for x in s[:n])

    def wrap(x):
        return x & mask if w < 64 else x

    def sx(x):  # as signed w-bit
        x = x & mask if w < 64 else x
        return np.where(x >= (1 << (w - 1)), x - (1 << w), x) if w < 64 else x

    if base in ("mov", "cvta") and known(1):
        return wrap(s[0])
    if base == "cvt" and known(1):  # cvt.DST.SRC: the source's width and signedness decide
        src = parts[-1]
        sw = int(src[1:]) if src[1:].isdigit() else 64
        x = s[0] & ((1 << sw) - 1) if sw < 64 else s[0]
        if src[0] == "s" and sw < 64:
            x = np.where(x >= (1 << (sw - 1)), x - (1 << sw), x)
        return x
    if not known(1):
        return None
    a = s[0]
    if base == "not":
        return 1 - (a != 0) if "pred" in parts else wrap(~a)
    if base == "neg":
        return wrap(-a)
    if base in ("add", "sub", "and", "or", "xor", "shl", "shr", "min", "max", "rem", "div", "mul") and known(
        2
    ):
        b = s[1]
        if base == "add":
            return wrap(a + b)
        if base == "sub":
            return wrap(a - b)
        if base == "and":
            return wrap(a & b)
        if base == "or":
            return wrap(a | b)
        if base == "xor":
            return wrap(a ^ b)
        if base == "shl":
            return wrap(np.where(b >= w, 0, a << np.minimum(b, 63)))
        if base == "shr":
            x = sx(a) if _signed(opcode) else wrap(a)
            return wrap(x >> np.minimum(b, 63))
        if base in ("min", "max"):
            x, y = (sx(a), sx(b)) if _signed(opcode) else (wrap(a), wrap(b))
            return wrap(np.minimum(x, y) if base == "min" else np.maximum(x, y))
        if base in ("rem", "div"):
            if np.any(b == 0):
                return None
            x, y = (sx(a), sx(b)) if _signed(opcode) else (wrap(a), wrap(b))
            q = np.trunc(x / y).astype(np.int64) if _signed(opcode) else x // y
            return wrap(q if base == "div" else x - q * y)
        if base == "mul":
            if "wide" in parts:
                return a * b
            return wrap(a * b) if "lo" in parts or len(parts) == 2 else None
    if base == "mad" and known(3):
        if "wide" in parts:
            return s[0] * s[1] + s[2]
        return wrap(a * s[1] + s[2]) if "lo" in parts else None
    if base == "selp" and known(3):
        return np.where(s[2].astype(bool), s[0], s[1])
    if base == "bfe" and known(3):
        pos, ln = s[1] & 0xFF, s[2] & 0xFF
        x = wrap(a) >> pos
        field_ = x & ((np.int64(1) << ln) - 1)
        if _signed(opcode):
            top = (field_ >> np.maximum(ln - 1, 0)) & 1
            field_ = np.where((ln > 0) & (top == 1), field_ - (np.int64(1) << ln), field_)
        return wrap(field_)
    if base == "bfi" and known(4):
        b, pos, ln = s[1], s[2] & 0xFF, s[3] & 0xFF
        m = ((np.int64(1) << ln) - 1) << pos
        return wrap((b & ~m) | ((a << pos) & m))
    if base == "lop3" and known(4):
        b, c, lut = s[1], s[2], int(s[3][0])
        out = np.zeros_like(a)
        for bit in range(8):
            if lut >> bit & 1:
                x = a if bit & 4 else ~a
                y = b if bit & 2 else ~b
                z = c if bit & 1 else ~c
                out |= x & y & z
        return wrap(out)
    if base == "setp" and known(2):
        cmp = _CMP.get(parts[1])
        if cmp is None:
            return None
        x, y = (sx(a), sx(s[1])) if _signed(opcode) else (wrap(a), wrap(s[1]))
        r = cmp(x, y)
        if len(parts) > 3 and parts[2] in ("and", "or", "xor") and known(3):
            c = s[2].astype(bool)
            r = {"and": r & c, "or": r | c, "xor": r ^ c}[parts[2]]
        return r.astype(np.int64)
    return None


# ----- shared-memory instructions ----------------------------------------------------------------
@dataclass
class SharedOp:
    """A shared-memory instruction: its family, its name in the scan's terms, where it comes from,
    and (where known) each thread's byte offset and whether it is active, as ``(warps, 32)``."""

    ins: Instruction
    family: str  # lsu / ldgsts / tma / mma / mbarrier / tensormap / tmem / atomic
    name: str  # ld32, st128, ldsm.x4.trans, stsm.x4, cp16, tma.load, wgmma, ...
    loops: tuple[int, ...] = ()  # PTX loops around it (ids = index of the loop's first instruction)
    conditional: bool = False  # reached under a branch on a run-time value
    offsets: np.ndarray | None = None
    active: np.ndarray | None = None
    reach: np.ndarray | None = None  # (warps, 32): the threads whose control flow reaches it
    unknown: str = ""  # why the addresses or active lanes are not known
    extra: dict = field(default_factory=dict)


def _lsu_name(opcode: str) -> str | None:
    parts = opcode.split(".")
    if parts[0] in ("ld", "st") and any(p.startswith("shared") for p in parts):
        vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        return f"{parts[0]}{vec * _width(opcode)}"
    if parts[0] in ("ldmatrix", "stmatrix"):
        x = next((p for p in parts if re.fullmatch(r"x\d", p)), "x1")
        return f"{'ldsm' if parts[0] == 'ldmatrix' else 'stsm'}.{x}{'.trans' if 'trans' in parts else ''}"
    return None


def classify(ins: Instruction) -> tuple[str, str] | None:
    """``(family, name)`` of an instruction that touches shared memory, else ``None``.

    >>> cp = "cp.async.cg.shared.global"
    >>> classify(Instruction(0, 1, cp, ["[%r1]", "[%rd1]", "0x10", "%r2"], None, ("", 0, 0)))
    ('ldgsts', 'cp16.cg')
    """
    op = ins.opcode
    parts = op.split(".")
    lsu = _lsu_name(op)
    if lsu:
        return "lsu", lsu
    if op.startswith("cp.async.bulk"):
        if "commit_group" in parts or "wait_group" in parts:
            return None
        spaces = [p for p in parts[2:] if p.startswith(("shared", "global"))]
        return "tma", "tma.load" if spaces and spaces[0].startswith("shared") else "tma.store"
    if op.startswith("cp.async.c") and "shared" in parts:
        size = int(ins.operands[2], 0) if len(ins.operands) > 2 else 0
        return "ldgsts", f"cp{size}.{parts[2]}"
    if parts[0] in ("atom", "red") and any(p.startswith("shared") for p in parts):
        return "atomic", f"{parts[0]}.shared"
    if parts[0] == "mbarrier" and any(p.startswith("shared") for p in parts):
        return "mbarrier", f"mbarrier.{parts[1]}"
    if parts[0] == "tensormap" and any(p.startswith("shared") for p in parts):
        return "tensormap", f"tensormap.{parts[1]}"
    if parts[0] == "wgmma" and parts[1] == "mma_async":
        return "mma", "wgmma"
    if parts[0] == "tcgen05":
        if parts[1] == "commit":
            return "mbarrier", "tcgen05.commit"
        if parts[1] == "mma":
            return "mma", "tcgen05.mma"
        if any(p.startswith("shared") for p in parts):
            return "tmem", f"tcgen05.{parts[1]}"
    return None


def _loops(k: Kernel) -> list[tuple[int, int]]:
    """``(first, last)`` instruction indices of each loop: the backward branches to one label
    (a rotated loop has several) span its body. Spin-waits inside inline asm are not loops of
    the kernel's program."""
    ends: dict[int, int] = {}
    for ins in k.body:
        if ins.opcode.split(".")[0] == "bra" and ins.operands and ins.scope == 0:
            target = k.labels.get(ins.operands[-1])
            if target is not None and target <= ins.index:
                ends[target] = max(ends.get(target, target), ins.index)
    return sorted(ends.items())


def _block_masks(k: Kernel, m: _Machine) -> tuple[list[np.ndarray], list[bool]]:
    """Per instruction: the threads that reach it, and whether a branch on a run-time value
    decides it (then both ways are taken). Reachability per thread is a fixpoint over all edges,
    back edges included (a rotated loop is entered in its middle)."""
    n = len(k.body)
    for _ in range(3):  # values first (a rotated loop uses values defined further down the text)
        for ins in k.body:
            m.step(ins)
    starts = sorted({0, *k.labels.values()} | {i.index + 1 for i in k.body if i.opcode.startswith("bra")})
    starts = [s for s in starts if s < n]
    block_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    nb = len(starts)
    reach = [np.zeros(k.threads, dtype=bool) for _ in range(nb)]
    cond = [False] * nb
    if nb:
        reach[0][:] = True
    edges: list[list[tuple[int, np.ndarray | None, bool]]] = [[] for _ in range(nb)]
    for b, s in enumerate(starts):  # (successor, thread condition or None for all, on a run-time value)
        e = starts[b + 1] if b + 1 < nb else n
        rest: np.ndarray | None = None
        falls, unk_all = True, False
        for i in range(s, e):
            ins = k.body[i]
            base = ins.opcode.split(".")[0]
            if base == "ret" and ins.guard is None:
                falls = False
            if base != "bra" or not ins.operands:
                continue
            t = k.labels.get(ins.operands[-1])
            tb = int(block_of[t]) if t is not None and t < n else None
            p = m.predicate(ins)
            if ins.guard is None:
                if tb is not None:
                    edges[b].append((tb, rest, unk_all))
                falls = False
            elif p is None:
                if tb is not None:
                    edges[b].append((tb, rest, True))
                unk_all = True
            else:
                if tb is not None:
                    edges[b].append((tb, p if rest is None else rest & p, unk_all))
                rest = ~p if rest is None else rest & ~p
        if falls and b + 1 < nb:
            edges[b].append((b + 1, rest, unk_all))
    for _ in range(4 * nb + 4):
        changed = False
        for b in range(nb):
            for tb, c, unk in edges[b]:
                new = reach[b] if c is None else reach[b] & c
                merged = reach[tb] | new
                flag = cond[tb] or ((cond[b] or unk) and bool(new.any()))
                if not np.array_equal(merged, reach[tb]) or flag != cond[tb]:
                    reach[tb], cond[tb], changed = merged, flag, True
        if not changed:
            break
    masks = [reach[int(block_of[i])] for i in range(n)]
    conds = [cond[int(block_of[i])] for i in range(n)]
    return masks, conds


def shared_ops(k: Kernel) -> list[SharedOp]:
    """Every shared-memory instruction of the kernel, in program order, with per-thread offsets
    and active lanes where the code determines them."""
    m = _Machine(k)
    masks, conds = _block_masks(k, m)
    loops = _loops(k)
    warps = max(1, k.threads // 32)
    out = []
    for ins in k.body:
        c = classify(ins)
        if c is None:
            continue
        fam, name = c
        op = SharedOp(ins, fam, name, tuple(a for a, b in loops if a <= ins.index <= b), conds[ins.index])
        op.reach = masks[ins.index][: warps * 32].reshape(warps, 32)
        pred = m.predicate(ins)
        mem = next((o for o in ins.operands if o.lstrip().startswith("[")), None)
        addr = m.address(mem, ins.scope) if mem is not None else None
        if fam in ("lsu", "ldgsts", "atomic"):
            if pred is None:
                op.unknown = f"the predicate {ins.guard[1]} depends on run-time values"
            elif addr is None:
                op.unknown = "the address depends on run-time values (a loop-carried index, a parameter)"
            else:
                act = (masks[ins.index] & pred)[: warps * 32].reshape(warps, 32)
                op.offsets = addr[: warps * 32].reshape(warps, 32)
                op.active = act
        else:
            op.active = None if pred is None else (masks[ins.index] & pred)[: warps * 32].reshape(warps, 32)
        out.append(op)
    return out
