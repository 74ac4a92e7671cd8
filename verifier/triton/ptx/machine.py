"""The PTX evaluator: per-thread values of single-definition registers, from ``%tid`` through
the integer arithmetic Triton's lowering emits (anything loaded, a parameter or carried around a
loop is unknown).

>>> _compute("shl.b32", [np.array([1, 2]), np.array([4, 4])], ["%r1", "%r2", "4"]).tolist()
[16, 32]
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.triton.ptx.parse import _MEM, Instruction, Kernel, _classes, _signed, _width

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
