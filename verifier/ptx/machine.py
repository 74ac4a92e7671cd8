"""The PTX evaluator: per-thread values of single-definition registers, from ``%tid`` through
the integer arithmetic Triton's lowering emits (anything loaded, a parameter or carried around a
loop is unknown).

>>> compute("shl.b32", [np.array([1, 2]), np.array([4, 4])], ["%r1", "%r2", "4"]).tolist()
[16, 32]
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.ptx.parse import (
    MEM_OPERAND,
    Instruction,
    Kernel,
    classes_of,
    signed_type,
    type_width,
)
from bankproof.verifier.ptx.warp import shuffle

# ----- evaluation --------------------------------------------------------------------------------
_SREG = {"%tid.x": "tid", "%laneid": "lane"}
_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}  # fmt: skip
_DEST_LESS = ("st", "stmatrix", "bar", "barrier", "bra", "brx", "cp", "mbarrier", "fence", "tensormap", "ret",
              "red", "wgmma", "tcgen05", "prefetch", "membar", "exit", "trap", "griddepcontrol")  # fmt: skip


REGS = re.compile(r"%[\w$]+")
_PLAIN = re.compile(r"%[A-Za-z0-9_]+")  # one plain register name
_FLOAT = re.compile(r"\.(?:b?f\d+(?:x\d)?|e[45]m[23]\w*|tf32)(?:\.|$)")  # a float type: not an address


def _reg(name: str, scope: int, local: set[tuple[int, str]]) -> str:
    return f"{name}@{scope}" if (scope, name) in local else name


class PtxMachine:
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
        base = ins.opcode.split(".", 1)[0]
        if base in _DEST_LESS or not ins.operands:
            return []
        first = ins.operands[0]
        if _PLAIN.fullmatch(first):  # one plain register
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
        if op.startswith(("%ctaid.", "%nctaid.")):  # the CTA asked for (memo["launch"]), else unknown
            v = self.k.memo.get("launch", {}).get(op[1:])
            return None if v is None else np.full_like(self.tid, v)
        if op.startswith("%tid.") or op.startswith("%ntid."):
            return np.zeros_like(self.tid) if op.startswith("%tid.") else None
        if op == "global_smem":
            return np.zeros_like(self.tid)
        if op.startswith("%"):
            return self.vals.get(_reg(op, scope, self.local))
        if op.startswith("{") and op.endswith("}") and op.count(",") == 1:  # mov.b64 d, {lo, hi}
            lo, hi = (self.value(p, scope) for p in op[1:-1].split(","))
            return None if lo is None or hi is None else (lo & 0xFFFFFFFF) | (hi << 32)
        if op not in self.consts:
            try:
                num = None if op.startswith(("0f", "0d")) else int(op[:-1] if op[-1:] in "Uu" else op, 0)
                if num is not None and num >= 1 << 63:  # a 64-bit pattern: keep its bits in int64
                    num -= 1 << 64
            except ValueError:  # 0x7701U above; a label, a vector, a float here
                num = None
            self.consts[op] = None if num is None else np.full_like(self.tid, num)
        return self.consts[op]

    def address(self, operand: str, scope: int) -> np.ndarray | None:
        m = MEM_OPERAND.search(operand)
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
        self._params(need)
        if "computable" not in self.k.memo:  # the body's integer computations (alike for every machine)
            self.k.memo["computable"] = [
                ins
                for ins in self.k.body
                if ins.opcode.split(".", 1)[0] in _COMPUTED and not _FLOAT.search(ins.opcode)
            ]
        todo = [ins for ins in self.k.memo["computable"] if any(d in need for d in self._dests(ins))]
        for _ in range(passes):
            known = len(self.vals)
            todo = [ins for ins in todo if not self.step(ins)]
            if len(self.vals) == known:
                break

    def _params(self, need: set[str]) -> None:
        """Kernel parameters the launch gives (``kernel.memo["launch"]["params"]``: PTX parameter
        name -> integer): ``ld.param`` of one is its value (little-endian bytes at an offset)."""
        given = self.k.memo.get("launch", {}).get("params", {})
        if not given:
            return
        for ins in self.k.body:
            if not ins.opcode.startswith("ld.param") or len(ins.operands) != 2:
                continue
            m = re.fullmatch(r"\[\s*([\w$]+)\s*(?:\+\s*(\d+))?\s*\]", ins.operands[1].strip())
            dests = self._dests(ins)
            if not m or m.group(1) not in given or len(dests) != 1 or dests[0] not in need:
                continue
            if self.defs.get(dests[0], 1) != 1 or dests[0] in self.guarded:
                continue
            w = type_width(ins.opcode)
            v = (int(given[m.group(1)]) >> (8 * int(m.group(2) or 0))) & ((1 << w) - 1)
            self.vals[dests[0]] = np.full_like(self.tid, v)

    def _slice(self) -> set[str]:
        """The registers that can matter: those of shared-memory addresses, predicates and branch
        operands, and (transitively) every register they are computed from."""
        if "slice" not in self.k.memo:
            self.k.memo["slice"] = self._find_slice()
        return self.k.memo["slice"]

    def _find_slice(self) -> set[str]:
        """The closure of the body's own needs (kept as ``base_slice``: it depends on the body
        alone, so every consumer of one parse shares it), then of what a caller asks for; only the
        latter where the caller says it needs nothing else (``only_extra``: the descriptor check)."""
        if self.k.memo.get("only_extra"):
            return self._closure(set(self.k.memo.get("extra_need", ())), frozenset())
        base = self.k.memo.get("base_slice")
        if base is None:
            seeds: set[str] = set()
            for ins in self.k.body:
                if ins.guard is not None:
                    seeds.add(_reg(ins.guard[1], ins.scope, self.local))
                op = ins.opcode.split(".", 1)[0]
                if op in ("bra", "brx") or classes_of(self.k)[ins.index] is not None:
                    for o in ins.operands:
                        if o.lstrip().startswith("[") or op in ("bra", "brx"):
                            seeds |= {_reg(r, ins.scope, self.local) for r in REGS.findall(o)}
            base = frozenset(self._closure(seeds, frozenset()))
            self.k.memo["base_slice"] = base
        extra = set(self.k.memo.get("extra_need", ())) - base  # registers a caller asks for (descriptors)
        return set(base) | self._closure(extra, base)

    def _closure(self, seeds: set[str], known: frozenset) -> set[str]:
        """``seeds`` and every register they are computed from, not going through ``known``."""
        writers: dict[str, list[Instruction]] = self.k.memo["writers"]
        need, todo = set(seeds), list(seeds)
        while todo:
            for ins in writers.get(todo.pop(), []):
                for o in ins.operands[1:]:
                    for r in REGS.findall(o):
                        r = _reg(r, ins.scope, self.local)
                        if r not in need and r not in known:
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
        out = compute(ins.opcode, srcs, ins.operands[1:])
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


class _Args:
    """One instruction's operands as the rules of :data:`_RULES` see them: ``s`` the sources'
    per-thread values, ``w`` the operation's bit width, :meth:`wrap` to it, :meth:`sx` as signed."""

    def __init__(self, opcode: str, s: list):
        self.parts = opcode.split(".")
        self.s = s
        self.a = s[0] if s else None
        self.w = type_width(opcode)
        self.signed = signed_type(opcode)
        self.mask = (1 << self.w) - 1 if self.w < 64 else -1

    def wrap(self, x):
        return x & self.mask if self.w < 64 else x

    def sx(self, x):  # as signed w-bit
        if self.w >= 64:
            return x
        x = x & self.mask
        return np.where(x >= (1 << (self.w - 1)), x - (1 << self.w), x)

    def pair(self, a, b):
        """Both operands as the opcode's signedness reads them."""
        return (self.sx(a), self.sx(b)) if self.signed else (self.wrap(a), self.wrap(b))


def _cvt(o: _Args):  # cvt.DST.SRC: the source's width and signedness decide
    src = o.parts[-1]
    sw = int(src[1:]) if src[1:].isdigit() else 64
    x = o.a & ((1 << sw) - 1) if sw < 64 else o.a
    if src[0] == "s" and sw < 64:
        x = np.where(x >= (1 << (sw - 1)), x - (1 << sw), x)
    dst = o.parts[1] if len(o.parts) > 2 else ""
    dw = int(dst[1:]) if dst[:1] in "usb" and dst[1:].isdigit() else 64
    return x & ((1 << dw) - 1) if dw < sw else x  # narrowing keeps the low bits


def _shr(o: _Args):
    x = o.sx(o.a) if o.signed else o.wrap(o.a)
    return o.wrap(x >> np.minimum(o.s[1], 63))


def _min_max(o: _Args):
    x, y = o.pair(o.a, o.s[1])
    return o.wrap(np.minimum(x, y) if o.parts[0] == "min" else np.maximum(x, y))


def _div_rem(o: _Args):
    if np.any(o.s[1] == 0):
        return None
    x, y = o.pair(o.a, o.s[1])
    q = np.trunc(x / y).astype(np.int64) if o.signed else x // y
    return o.wrap(q if o.parts[0] == "div" else x - q * y)


def _mul(o: _Args):
    if "wide" in o.parts:
        return o.a * o.s[1]
    return o.wrap(o.a * o.s[1]) if "lo" in o.parts or len(o.parts) == 2 else None


def _mad(o: _Args):
    if "wide" in o.parts:
        return o.a * o.s[1] + o.s[2]
    return o.wrap(o.a * o.s[1] + o.s[2]) if "lo" in o.parts else None


def _prmt(o: _Args):  # byte permute of {b, a}, default mode
    if len(o.parts) != 2:
        return None
    both = (o.wrap(o.s[1]) << 32) | (o.a & 0xFFFFFFFF)
    out = np.zeros_like(o.a)
    for i in range(4):
        sel = (o.s[2] >> (4 * i)) & 0xF
        byte = (both >> (8 * (sel & 7))) & 0xFF
        byte = np.where(sel & 8, np.where(byte & 0x80, 0xFF, 0), byte)  # replicate the sign bit
        out |= byte << (8 * i)
    return out


def _bfe(o: _Args):
    pos, ln = o.s[1] & 0xFF, o.s[2] & 0xFF
    field_ = (o.wrap(o.a) >> pos) & ((np.int64(1) << ln) - 1)
    if o.signed:
        top = (field_ >> np.maximum(ln - 1, 0)) & 1
        field_ = np.where((ln > 0) & (top == 1), field_ - (np.int64(1) << ln), field_)
    return o.wrap(field_)


def _bfi(o: _Args):
    b, pos, ln = o.s[1], o.s[2] & 0xFF, o.s[3] & 0xFF
    m = ((np.int64(1) << ln) - 1) << pos
    return o.wrap((b & ~m) | ((o.a << pos) & m))


def _lop3(o: _Args):
    a, b, c, lut = o.a, o.s[1], o.s[2], int(o.s[3][0])
    out = np.zeros_like(a)
    for bit in range(8):
        if lut >> bit & 1:
            out |= (a if bit & 4 else ~a) & (b if bit & 2 else ~b) & (c if bit & 1 else ~c)
    return o.wrap(out)


def _setp(o: _Args):
    cmp = _CMP.get(o.parts[1])
    if cmp is None:
        return None
    r = cmp(*o.pair(o.a, o.s[1]))
    if len(o.parts) > 3 and o.parts[2] in ("and", "or", "xor") and _known(o.s, 3):
        c = o.s[2].astype(bool)
        r = {"and": r & c, "or": r | c, "xor": r ^ c}[o.parts[2]]
    return r.astype(np.int64)


# opcode -> (the sources that must be known, the rule): one entry per opcode, no branches
_RULES = {
    "mov": (1, lambda o: o.wrap(o.a)),
    "cvta": (1, lambda o: o.wrap(o.a)),
    "cvt": (1, _cvt),
    "not": (1, lambda o: 1 - (o.a != 0) if "pred" in o.parts else o.wrap(~o.a)),
    "neg": (1, lambda o: o.wrap(-o.a)),
    "add": (2, lambda o: o.wrap(o.a + o.s[1])),
    "sub": (2, lambda o: o.wrap(o.a - o.s[1])),
    "and": (2, lambda o: o.wrap(o.a & o.s[1])),
    "or": (2, lambda o: o.wrap(o.a | o.s[1])),
    "xor": (2, lambda o: o.wrap(o.a ^ o.s[1])),
    "shl": (2, lambda o: o.wrap(np.where(o.s[1] >= o.w, 0, o.a << np.minimum(o.s[1], 63)))),
    "shr": (2, _shr),
    "min": (2, _min_max),
    "max": (2, _min_max),
    "rem": (2, _div_rem),
    "div": (2, _div_rem),
    "mul": (2, _mul),
    "mad": (3, _mad),
    "prmt": (3, _prmt),
    "shfl": (3, lambda o: shuffle(o.parts, o.s[0], o.s[1], o.s[2]) if "sync" in o.parts else None),
    "selp": (3, lambda o: np.where(o.s[2].astype(bool), o.s[0], o.s[1])),
    "bfe": (3, _bfe),
    "bfi": (4, _bfi),
    "lop3": (4, _lop3),
    "setp": (2, _setp),
}
_COMPUTED = frozenset(_RULES)  # the opcodes compute evaluates


def _known(s: list, n: int) -> bool:
    return len(s) >= n and all(x is not None for x in s[:n])


def compute(opcode: str, s: list[np.ndarray | None], raw: list[str]) -> np.ndarray | None:
    """One instruction's per-thread result from its sources' values (``None``: not known), by
    its opcode's rule in :data:`_RULES`.

    >>> compute("add.s32", [np.array([1, 2]), np.array([4, 4])], []).tolist()
    [5, 6]
    """
    rule = _RULES.get(opcode.split(".", 1)[0])
    if rule is None or not _known(s, rule[0]):
        return None
    return rule[1](_Args(opcode, s))
