"""Triton's PTX, read as a program: every shared-memory instruction of a kernel with the byte
address each thread of the CTA gives it, evaluated from ``%tid`` through the integer arithmetic
Triton's lowering emitted. Scratch (reductions, scans, layout conversions) has no layout in the
TTGIR; its layout is whatever this code computes, so it is read from the code itself.

Registers defined once whose inputs are known get one value per thread; anything else (kernel
parameters, loaded data, values carried around a loop) is unknown, and so is an address or a
predicate computed from it. Control flow: blocks are active for the threads whose known branch
conditions lead there (a branch on an unknown value leads both ways, and the instruction is marked
``conditional``); loops are the natural loops of backward branches.

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
from bankproof.verifier.triton.ttgir import split_top

Location = tuple[str, int, int]  # (source file name, line, column)

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)
_LABEL = re.compile(r"^\s*([$\w]+):")
_PRED = re.compile(r"^@(!?)(%?[\w$]+)\s+")
_MEM = re.compile(r"\[\s*([^\]]*?)\s*\]")
MASK32 = (1 << 32) - 1


@dataclass(slots=True)
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
    tables: dict[str, list[str]] = field(default_factory=dict)  # ``.branchtargets`` jump tables
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # per-kernel analysis caches


_TOP_COMMA = re.compile(r",(?![^\[{(]*[\]})])")  # a comma outside any bracket group
_NESTED = re.compile(r"[\[{(][^\]})]*[\[{(]")  # a group opened inside another


def _split_operands(text: str) -> list[str]:
    if not any(c in text for c in "[{("):
        return [x.strip() for x in text.split(",") if x.strip()]
    if not _NESTED.search(text):  # groups side by side, none inside another: one regex split
        return [x.strip() for x in _TOP_COMMA.split(text) if x.strip()]
    return [x for x in split_top(text) if x]


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
    tables: dict[str, list[str]] = {}
    table: str | None = None  # the jump table being read (``NAME: .branchtargets L1, L2, ...;``)
    last_label = "?"
    for n, raw in enumerate(body_text.splitlines(), start=start):
        line = (raw.split("//", 1)[0] if "//" in raw else raw).strip()
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
        if table is not None:
            tables[table] += [t.strip() for t in line.rstrip(";").split(",") if t.strip()]
            table = None if line.endswith(";") else table
            continue
        lab = _LABEL.match(line) if ":" in line else None
        if lab and not pending:
            last_label = lab.group(1) if scopes[-1] == 0 else f"{lab.group(1)}@{scopes[-1]}"
            labels[last_label] = len(body)  # inline asm's own labels are local to its braces
            line = line[lab.end() :].strip()
            if not line:
                continue
        if line.startswith(".branchtargets"):
            table = last_label
            tables[table] = []
            line = line[len(".branchtargets") :].strip()
            if line:
                tables[table] += [t.strip() for t in line.rstrip(";").split(",") if t.strip()]
                table = None if line.endswith(";") else table
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
    for name in tables:
        labels.pop(name, None)
    return Kernel(m.group(1), params, threads, body, labels, tables=tables)


# ----- evaluation --------------------------------------------------------------------------------
_SREG = {"%tid.x": "tid", "%laneid": "lane"}
_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}  # fmt: skip
_DEST_LESS = ("st", "stmatrix", "bar", "barrier", "bra", "brx", "cp", "mbarrier", "fence", "tensormap", "ret",
              "red", "wgmma", "tcgen05", "prefetch", "membar", "exit", "trap", "griddepcontrol")  # fmt: skip


_COMPUTED = frozenset(("mov", "cvta", "cvt", "not", "neg", "add", "sub", "and", "or", "xor", "shl", "shr",
                       "min", "max", "rem", "div", "mul", "mad", "selp", "bfe", "bfi", "lop3", "setp",
                       "prmt", "shfl"))  # fmt: skip  (the opcodes _compute evaluates)


_REGS = re.compile(r"%[\w$]+")
_FLOAT = re.compile(r"\.(?:b?f\d+(?:x\d)?|e[45]m[23]\w*|tf32)(?:\.|$)")  # a float type: not an address


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
        self.local: set[tuple[int, str]] = set()
        if "defs" not in kernel.memo:  # the same for every machine of a kernel
            writers: dict[str, list[Instruction]] = {}
            for ins in kernel.body:
                for d in self._dests(ins):
                    writers.setdefault(d, []).append(ins)
            kernel.memo["writers"] = writers
            # a register written in several places by the same unguarded instruction (LLVM
            # duplicates blocks) holds one value whichever way control went; only registers
            # that can matter (the slice) are ever evaluated
            need = self._slice()
            kernel.memo["defs"] = {d: len({(w.opcode, tuple(w.operands)) for w in writers[d]})
                                   for d in need if d in writers}  # fmt: skip
            kernel.memo["guarded"] = {d for d in need if any(w.guard is not None for w in writers.get(d, ()))}
        self.defs: dict[str, int] = kernel.memo["defs"]
        self.guarded: set[str] = kernel.memo["guarded"]
        self.cand: dict[str, dict[tuple, np.ndarray]] = {}
        self.consts: dict[str, np.ndarray | None] = {}

    def _dests(self, ins: Instruction) -> list[str]:
        cache = self.k.memo.setdefault("dests", {})  # the same for every machine of a kernel
        if ins.index not in cache:
            cache[ins.index] = self._find_dests(ins)
        return cache[ins.index]

    def _find_dests(self, ins: Instruction) -> list[str]:
        base = ins.opcode.split(".")[0]
        if base in _DEST_LESS or not ins.operands:
            return []
        first = ins.operands[0]
        if first[:1] == "%" and first[1:].replace("_", "").isalnum():  # one plain register
            return [_reg(first, ins.scope, self.local)] if self.local else [first]
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
        if op not in self.consts:
            try:
                num = None if op.startswith(("0f", "0d")) else int(op[:-1] if op[-1:] in "Uu" else op, 0)
            except ValueError:  # 0x7701U above; a label, a vector, a float here
                num = None
            self.consts[op] = None if num is None else np.full_like(self.tid, num)
        return self.consts[op]

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

    def run(self, passes: int = 3) -> None:
        """Evaluate the body; later passes revisit only the instructions whose inputs were not
        known yet (a rotated loop uses values defined further down the text)."""
        need = self._slice()
        todo = [ins for ins in self.k.body if ins.opcode.split(".", 1)[0] in _COMPUTED
                and not _FLOAT.search(ins.opcode) and any(d in need for d in self._dests(ins))]  # fmt: skip
        for _ in range(passes):
            known = len(self.vals)
            todo = [ins for ins in todo if not self.step(ins)]
            if len(self.vals) == known:
                break

    def _slice(self) -> set[str]:
        """The registers that can matter: those of shared-memory addresses, predicates and branch
        operands, and (transitively) every register they are computed from."""
        if "slice" not in self.k.memo:
            self.k.memo["slice"] = self._find_slice()
        return self.k.memo["slice"]

    def _find_slice(self) -> set[str]:
        need: set[str] = set()
        for ins in self.k.body:
            if ins.guard is not None:
                need.add(_reg(ins.guard[1], ins.scope, self.local))
            base = ins.opcode.split(".", 1)[0]
            if base in ("bra", "brx") or _classes(self.k)[ins.index] is not None:
                for o in ins.operands:
                    if o.lstrip().startswith("[") or base in ("bra", "brx"):
                        need |= {_reg(r, ins.scope, self.local) for r in _REGS.findall(o)}
        writers: dict[str, list[Instruction]] = self.k.memo["writers"]
        todo = list(need)
        while todo:
            for ins in writers.get(todo.pop(), []):
                for o in ins.operands[1:]:
                    for r in _REGS.findall(o):
                        r = _reg(r, ins.scope, self.local)
                        if r not in need:
                            need.add(r)
                            todo.append(r)
        return need

    def step(self, ins: Instruction) -> bool:
        """Evaluate one instruction; ``False`` if its inputs are not known (yet). A register
        written in several places holds one known value only when every write computes the same
        value for every thread (LLVM duplicates blocks and recomputes thread indices); guarded
        writes make it unknown."""
        if ins.opcode.split(".", 1)[0] not in _COMPUTED:
            return True
        dests = self._dests(ins)
        if len(dests) != 1 or dests[0] in self.guarded or dests[0] in self.vals:
            return True
        srcs = [self.value(o, ins.scope) for o in ins.operands[1:]]
        out = _compute(ins.opcode, srcs, ins.operands[1:])
        if out is None:
            return False
        d = dests[0]
        cands = self.cand.setdefault(d, {})
        cands[(ins.opcode, tuple(ins.operands))] = out
        if len(cands) == self.defs[d]:
            vals = list(cands.values())
            if all(np.array_equal(vals[0], v) for v in vals[1:]):
                self.vals[d] = vals[0]
        return True


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
        dst = parts[1] if len(parts) > 2 else ""
        dw = int(dst[1:]) if dst[:1] in "usb" and dst[1:].isdigit() else 64
        return x & ((1 << dw) - 1) if dw < sw else x  # narrowing keeps the low bits
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
    if base == "prmt" and known(3) and len(parts) == 2:  # byte permute of {b, a}, default mode
        both = (wrap(s[1]) << 32) | (a & 0xFFFFFFFF)
        out = np.zeros_like(a)
        for i in range(4):
            sel = (s[2] >> (4 * i)) & 0xF
            byte = (both >> (8 * (sel & 7))) & 0xFF
            byte = np.where(sel & 8, np.where(byte & 0x80, 0xFF, 0), byte)  # replicate the sign bit
            out |= byte << (8 * i)
        return out
    if base == "shfl" and known(3) and "sync" in parts:
        return _shuffle(parts, s[0], s[1], s[2])
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


def _shuffle(parts: list[str], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """``shfl.sync.MODE``: each thread reads ``a`` from a source lane of its own warp (whole-warp
    segments only: ``c`` = 31 for idx/bfly/down, 0 for up; out-of-range sources read their own)."""
    t = np.arange(a.shape[0])
    lane, base = t % 32, t - t % 32
    mode = parts[2] if len(parts) > 2 else ""
    if mode == "idx" and np.all(c == 31):
        src = b & 31
    elif mode == "bfly" and np.all(c == 31):
        src = lane ^ (b & 31)
    elif mode == "down" and np.all(c == 31):
        src = np.where(lane + b <= 31, lane + b, lane)
    elif mode == "up" and np.all(c == 0):
        src = np.where(lane - b >= 0, lane - b, lane)
    else:
        return None
    idx = np.minimum(base + src, a.shape[0] - 1)
    return a[idx]


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


def _classes(k: Kernel) -> list[tuple[str, str] | None]:
    """:func:`classify` of every instruction of the kernel (computed once)."""
    if "classes" not in k.memo:
        k.memo["classes"] = [classify(ins) for ins in k.body]
    return k.memo["classes"]


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


def _target(k: Kernel, ins: Instruction) -> int | None:
    """The instruction index a branch goes to (a label of its own inline-asm block first)."""
    name = ins.operands[-1] if ins.operands else ""
    return k.labels.get(f"{name}@{ins.scope}", k.labels.get(name))


@dataclass(frozen=True)
class PtxLoop:
    """A natural loop of the kernel's control flow: its header (the index of its first
    instruction, the loop's id) and the instructions of its body."""

    head: int
    body: frozenset[int]


def _cfg(k: Kernel) -> tuple[list[int], np.ndarray, list[set[int]]]:
    """Basic blocks (start indices), each instruction's block, and each block's successors
    (every way a branch can go, predicates ignored)."""
    n = len(k.body)
    jumps = {i.index + 1 for i in k.body if i.opcode.startswith(("bra", "brx"))}
    starts = [s for s in sorted({0, *k.labels.values()} | jumps) if s < n]
    block_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    succ: list[set[int]] = [set() for _ in starts]
    for b, s in enumerate(starts):
        e = starts[b + 1] if b + 1 < len(starts) else n
        falls = True
        for ins in k.body[s:e]:
            base = ins.opcode.split(".")[0]
            if base == "brx" and ins.operands:
                table = (k.labels.get(x) for x in k.tables.get(ins.operands[-1], []))
                succ[b] |= {int(block_of[t]) for t in table if t is not None and t < n}
                falls = falls and ins.guard is not None
            elif base == "bra" and ins.operands:
                t = _target(k, ins)
                if t is not None and t < n:
                    succ[b].add(int(block_of[t]))
                falls = falls and ins.guard is not None
            elif base in ("ret", "exit", "trap") and ins.guard is None:
                falls = False
        if falls and b + 1 < len(starts):
            succ[b].add(b + 1)
    return starts, block_of, succ


def _dominators(succ: list[set[int]], pred: list[set[int]]) -> list[set[int] | None]:
    """Each block's dominators (block 0 is the entry; ``None`` for a block it cannot reach)."""
    nb = len(succ)
    reach, todo = {0}, [0]
    while todo:
        for t in succ[todo.pop()]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    dom: list[set[int] | None] = [set(reach) if b in reach else None for b in range(nb)]
    if nb:
        dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in sorted(reach - {0}):
            ps = [dom[p] for p in pred[b] if dom[p] is not None]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def _loops(k: Kernel, dispatch: frozenset[int] = frozenset()) -> list[PtxLoop]:
    """The natural loops of the kernel's program: an edge (a branch or a fall-through) to a block
    that dominates its source closes a loop whose body is every block that reaches that edge
    without passing the header; loops sharing a header are one. Bodies, not text ranges: a
    rotated inner loop may end below its outer loop's last branch. Spin-waits inside inline asm
    are not loops of the kernel's program, and neither is the dispatch loop of warp
    specialization: a loop around a ``dispatch`` instruction (the worker warps' load of their
    state byte, after which they jump to their partition, which runs once per
    ``ttg.warp_specialize`` region; only worker warps run it, so no loop of the default warps'
    program holds it)."""
    starts, block_of, succ = _cfg(k)
    pred: list[set[int]] = [set() for _ in starts]
    for b, ss in enumerate(succ):
        for t in ss:
            pred[t].add(b)
    dom = _dominators(succ, pred)
    bodies: dict[int, set[int]] = {}
    back = [(b, h) for b, ss in enumerate(succ) for h in ss if dom[b] is not None and h in dom[b]]
    for tail, head in back:  # a latch may fall through into its header
        if k.body[starts[head]].scope != 0:  # a spin-wait inside inline asm
            continue
        body = bodies.setdefault(head, {head})
        todo = [tail]
        while todo:
            b = todo.pop()
            if b not in body:
                body.add(b)
                todo += list(pred[b])
    n = len(k.body)
    out = []
    for head, blocks in sorted(bodies.items()):
        ends = [starts[b + 1] if b + 1 < len(starts) else n for b in blocks]
        idx = frozenset(i for b, e in zip(blocks, ends, strict=True) for i in range(starts[b], e))
        if not idx & dispatch:
            out.append(PtxLoop(starts[head], idx))
    return out


def _state_epochs(k: Kernel, m: _Machine) -> tuple[dict[int, list[int]], list[dict[str, np.ndarray]]]:
    """Warp specialization's state word. The default warps store, with constant stores, one byte
    per worker warp saying which partition it runs (and at the end, "exit"); each worker warp loads
    its byte (an address that depends on the warp) and branches on it. Returns the state loads
    (load index -> covering store indices) and one register assignment per store ("epoch"): the
    value each thread loads after that store (-1 for a thread no store covers)."""
    consts = []
    for st in k.body:
        if st.opcode.startswith("st.shared") and len(st.operands) == 2 and st.guard is None and st.scope == 0:
            a = m.address(st.operands[0], st.scope)
            elems = [m.value(x, st.scope) for x in st.operands[1].strip("{}").split(",")]  # {v0, v1}
            if a is None or len(set(a.tolist())) != 1 or any(v is None or np.ptp(v) for v in elems):
                continue
            size = _width(st.opcode) // 8
            word = sum((int(v[0]) & ((1 << (8 * size)) - 1)) << (8 * size * i) for i, v in enumerate(elems))
            consts.append((st.index, int(a[0]), size * len(elems), word))
    loads: dict[int, list[int]] = {}
    epochs: dict[int, dict[str, np.ndarray]] = {}
    warps = k.threads // 32
    for ld in k.body:
        if not ld.opcode.startswith("ld.shared") or ld.scope != 0 or len(ld.operands) != 2 or warps < 2:
            continue
        dests = m._dests(ld)
        addr = m.address(ld.operands[1], ld.scope)
        if len(dests) != 1 or m.defs.get(dests[0]) != 1 or addr is None:
            continue
        if len(set(addr[: warps * 32 : 32].tolist())) < 2:  # one byte for every warp: not a state word
            continue
        width = _width(ld.opcode) // 8
        cover = [c for c in consts if ((addr >= c[1]) & (addr + width <= c[1] + c[2])).any()]
        if not cover:
            continue
        loads[ld.index] = [c[0] for c in cover]
        for idx, lo, size, word in cover:
            hit = (addr >= lo) & (addr + width <= lo + size)
            shift = np.where(hit, 8 * (addr - lo), 0)
            val = np.where(hit, (word >> shift) & ((1 << (8 * width)) - 1), -1)
            epochs.setdefault(idx, {})[dests[0]] = val
    return loads, [epochs[i] for i in sorted(epochs)]


def _block_masks(k: Kernel, m: _Machine) -> tuple[list[np.ndarray], list[bool]]:
    """Per instruction: the threads that reach it, and whether a branch on a run-time value
    decides it (then both ways are taken). Reachability per thread is a fixpoint over all edges,
    back edges included (a rotated loop is entered in its middle)."""
    n = len(k.body)
    m.run()  # values first
    jumps = {i.index + 1 for i in k.body if i.opcode.startswith(("bra", "brx"))}
    starts = sorted({0, *k.labels.values()} | jumps)
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
            if base == "brx" and ins.guard is None:
                edges[b] += _switch_edges(k, m, ins, block_of, rest, unk_all)
                falls = False
            if base != "bra" or not ins.operands:
                continue
            t = _target(k, ins)
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


Edge = tuple[int, "np.ndarray | None", bool]  # (successor, threads taking it or all, on a run-time value)


def _switch_edges(k: Kernel, m: _Machine, ins: Instruction, block_of: np.ndarray,
                  rest: np.ndarray | None, unk: bool) -> list[Edge]:  # fmt: skip
    """The edges of ``brx.idx``: to each table entry, for the threads whose index selects it (all
    of them, on a run-time value, where the index is not known)."""
    n = len(k.body)
    targets = [k.labels.get(t) for t in k.tables.get(ins.operands[-1], [])] if len(ins.operands) > 1 else []
    idx = m.value(ins.operands[0], ins.scope) if ins.operands else None
    out = []
    for j, t in enumerate(targets):
        if t is None or t >= n:
            continue
        if idx is None:
            out.append((int(block_of[t]), rest, True))
            continue
        sel = idx == j
        out.append((int(block_of[t]), sel if rest is None else rest & sel, unk))
    return out


def _reach(k: Kernel) -> tuple[_Machine, list[np.ndarray], list[bool], dict[int, list[int]]]:
    """Per-thread reachability, with warp specialization's dispatch resolved: the control flow is
    followed once per state-word store with the state loads' values known, and the threads
    reaching an instruction in any of them reach it. If a thread the stores do not cover reaches a
    state load, the state is treated as unknown (both ways) instead."""
    m = _Machine(k)
    masks, conds = _block_masks(k, m)
    loads, epochs = _state_epochs(k, m)
    if not epochs:
        return m, masks, conds, {}
    um = [np.zeros_like(x) for x in masks]
    uc = [False] * len(masks)
    for assign in epochs:
        me = _Machine(k)
        me.vals.update(assign)
        em, ec = _block_masks(k, me)
        for i in range(len(masks)):
            um[i] = um[i] | em[i]
            uc[i] = uc[i] or ec[i]
        for li in loads:
            reg = me._dests(k.body[li])[0]
            if reg in assign and (em[li] & (assign[reg] < 0)).any():
                return m, masks, conds, {}
    return m, um, uc, loads


_SIDE_EFFECTS = ("st", "ld", "bar", "barrier", "atom", "red", "cp", "mbarrier", "stmatrix", "ldmatrix",
                 "wgmma", "tcgen05", "fence", "membar", "bra", "brx", "call", "exit", "trap")  # fmt: skip


def _exit_guard(k: Kernel, m: _Machine, ins: Instruction) -> np.ndarray | None:
    """The threads that still need a shared load in the kernel's tail: when everything after it
    up to ``ret`` is side-effect free or guarded by one predicate P, and the loaded value is only
    used under P, ptxas exits the threads where P is false before the load (SASS ``@!P EXIT;
    LDS`` in Triton 3.9.0's cubins for a reduction's result store; Nsight Compute counts the load
    for those warps only: gpu_checks/results/h100-2026-11-23-triton-kernels.json, the histogram,
    column-max and cross-entropy kernels). Not for ``ldmatrix``, which ptxas keeps before the
    exit. ``None`` otherwise."""
    dests = set(m._dests(ins))
    guard = None
    for later in k.body[ins.index + 1 :]:
        base = later.opcode.split(".", 1)[0]
        if base == "ret" and later.guard is None:
            break
        uses = any(r in dests for o in later.operands[1:] for r in _REGS.findall(o)) or (
            base == "st" and any(r in dests for r in _REGS.findall(" ".join(later.operands)))
        )
        if later.guard is not None:
            if guard is not None and later.guard != guard:
                return None
            guard = later.guard
            continue
        if uses or base in _SIDE_EFFECTS:
            return None
    else:
        return None
    if guard is None:
        return None
    v = m.value(guard[1])
    if v is None:
        return None
    return ~v.astype(bool) if guard[0] else v.astype(bool)


def shared_ops(k: Kernel) -> list[SharedOp]:
    """Every shared-memory instruction of the kernel, in program order, with per-thread offsets
    and active lanes where the code determines them."""
    return analyse(k)[0]


def analyse(k: Kernel) -> tuple[list[SharedOp], list[PtxLoop]]:
    """The kernel's shared-memory instructions (:func:`shared_ops`) and its program's loops
    (the warp-specialize dispatch loop is not one)."""
    m, masks, conds, loads = _reach(k)
    loops = _loops(k, frozenset(loads))
    warps = max(1, k.threads // 32)
    state: dict[int, int] = {}  # warp-specialize state load/stores -> executions (regions + exit)
    for load, stores in loads.items():
        state[load] = len(stores)
        state.update(dict.fromkeys(stores, 1))
    out = []
    for ins, c in zip(k.body, _classes(k), strict=True):
        if c is None:
            continue
        fam, name = c
        around = tuple(lp.head for lp in loops if ins.index in lp.body)
        op = SharedOp(ins, fam, name, around, conds[ins.index])
        op.reach = masks[ins.index][: warps * 32].reshape(warps, 32)
        if ins.index in state:
            op.extra["ws_state"] = state[ins.index]
        pred = m.predicate(ins)
        mem = next((o for o in ins.operands if o.lstrip().startswith("[")), None)
        addr = m.address(mem, ins.scope) if mem is not None else None
        if fam in ("lsu", "ldgsts", "atomic"):
            if pred is None:
                op.unknown = f"the predicate {ins.guard[1]} depends on run-time values"
            elif addr is None:
                op.unknown = "the address depends on run-time values (a loop-carried index, a parameter)"
            else:
                # plain loads only: ptxas keeps an ldmatrix before the exit (measured: all warps run it)
                need = _exit_guard(k, m, ins) if fam == "lsu" and re.fullmatch(r"ld\d+", name) else None
                if need is not None:
                    pred = pred & need
                    op.extra["exit_before"] = True
                act = (masks[ins.index] & pred)[: warps * 32].reshape(warps, 32)
                op.offsets = addr[: warps * 32].reshape(warps, 32)
                op.active = act
        else:
            op.active = None if pred is None else (masks[ins.index] & pred)[: warps * 32].reshape(warps, 32)
        out.append(op)
    return out, loops
