"""The integer arithmetic the PTX evaluator folds (:func:`compute`): one rule per opcode over
per-thread values, at the instruction's bit width and signedness (what Triton's lowering emits:
add, mul, mad, shifts, bit fields, byte permutes, lop3, setp, cvt, min/max, div/rem, shuffles).

>>> compute("shl.b32", [np.array([1, 2]), np.array([4, 4])], ["%r1", "%r2", "4"]).tolist()
[16, 32]
"""

from __future__ import annotations

import numpy as np
from bankproof.verifier.ptx.forms import measured
from bankproof.verifier.ptx.parse import signed_type, type_width
from bankproof.verifier.ptx.warp import shuffle

_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}  # fmt: skip


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
        """Both operands as the opcode's signedness reads them (unsigned 64-bit ones as uint64: as
        int64 they would read negative past 2^63)."""
        if self.signed:
            return self.sx(a), self.sx(b)
        if self.w >= 64:
            u = lambda x: np.asarray(x, dtype=np.int64).view(np.uint64)  # noqa: E731
            return u(a), u(b)
        return self.wrap(a), self.wrap(b)


def _cvt(o: _Args):
    """``cvt[.sat].DST.SRC``: the source's width and signedness read the value; ``.sat`` clamps it
    to the destination type's range; the destination register holds its width's bits only.

    >>> cvt = lambda op, a: int(compute(op, [np.array([a])], [])[0])
    >>> cvt("cvt.u32.s8", 0x80), cvt("cvt.sat.s32.s64", 1 << 40), cvt("cvt.sat.u32.s32", -5)
    (4294967168, 2147483647, 0)
    """
    if len(o.parts) < 3:
        return None
    src, dst = o.parts[-1], o.parts[-2]
    if not (src[1:].isdigit() and dst[1:].isdigit()) or src[0] not in "usb" or dst[0] not in "usb":
        return None
    sw, dw = int(src[1:]), int(dst[1:])
    x = np.asarray(o.a, dtype=np.int64)
    if sw < 64:
        x = x & ((1 << sw) - 1)
        if src[0] == "s":
            x = np.where(x >= (1 << (sw - 1)), x - (1 << sw), x)
    if "sat" in o.parts[1:-2]:
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dst[0] == "s" else (0, (1 << dw) - 1)
        if sw == 64 and src[0] != "s":  # an unsigned 64-bit source above 2^63 reads negative as int64
            x = np.where(x < 0, hi, np.minimum(x, hi))
        else:
            x = np.clip(x, lo, min(hi, (1 << 63) - 1))
    if dst == "s8":  # the register around a signed byte: its extension is not measured here
        return None
    return x & ((1 << dw) - 1) if dw < 64 else x


def _shr(o: _Args):
    """Shift right by ``b`` (unsigned 32-bit; past the width: 0, or the sign for signed types)."""
    n = np.asarray(o.s[1], dtype=np.int64) & 0xFFFFFFFF
    if o.signed:
        return o.wrap(o.sx(o.a) >> np.minimum(n, 63))
    x = np.asarray(o.wrap(o.a), dtype=np.int64).view(np.uint64)
    out = (x >> np.minimum(n, 63).astype(np.uint64)).view(np.int64)
    return np.where(n >= o.w, 0, out)


def _min_max(o: _Args):
    x, y = o.pair(o.a, o.s[1])
    r = np.minimum(x, y) if o.parts[0] == "min" else np.maximum(x, y)
    return o.wrap(r.view(np.int64) if r.dtype == np.uint64 else r)


def _div_rem(o: _Args):
    """Integer division truncating toward zero (and its remainder), exact at every width, never
    through floating point (which rounds past 2^53): numpy integers up to 32 bits, Python's for 64."""
    if np.any(o.s[1] == 0):
        return None
    if o.w <= 32:
        x, y = o.pair(o.a, o.s[1])
        q = np.abs(x) // np.abs(y) * np.where((x < 0) == (y < 0), 1, -1)
        return o.wrap(q if o.parts[0] == "div" else x - q * y)
    out = []
    for x, y in zip(*(np.asarray(v, dtype=np.int64).tolist() for v in (o.a, o.s[1])), strict=True):
        if not o.signed:
            x, y = x % (1 << 64), y % (1 << 64)
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        r = (q if o.parts[0] == "div" else x - q * y) % (1 << 64)
        out.append(r - (1 << 64) if r >> 63 else r)
    return np.array(out, dtype=np.int64)


def _wide(o: _Args):
    """The 2w-bit product of the sources read at the type's width and signedness (w <= 32)."""
    if o.w > 32:
        return None
    x, y = o.pair(o.a, o.s[1])
    return np.asarray(x, dtype=np.int64) * np.asarray(y, dtype=np.int64)


def _mul(o: _Args):
    if "wide" in o.parts:
        return _wide(o)
    return o.wrap(o.a * o.s[1]) if "lo" in o.parts or len(o.parts) == 2 else None


def _mad(o: _Args):
    if "wide" in o.parts:
        p = _wide(o)
        if p is None:
            return None
        c = np.asarray(o.s[2], dtype=np.int64)
        total = p + (c & ((1 << 2 * o.w) - 1) if o.w < 32 else c)  # wraps as int64 does at 64 bits
        return total & ((1 << 2 * o.w) - 1) if o.w < 32 else total
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
    """The PTX ISA's pseudo-code: bits ``pos`` .. ``pos + len - 1`` of ``a`` (``pos`` and ``len``
    each their low byte); past the width, the sign bit ``a[min(pos + len - 1, msb)]`` (signed
    types, ``len`` > 0) or 0 fills.

    >>> bfe = lambda op, a, p, n: int(compute(op, [np.array([a]), np.array([p]), np.array([n])], [])[0])
    >>> hex(bfe("bfe.s32", 0x80000000, 28, 8)), bfe("bfe.u32", 0xF0, 4, 40), bfe("bfe.s32", 0xF0, 4, 0)
    ('0xfffffff8', 15, 0)
    """
    if _past_a_byte(o, o.s[1], o.s[2]):
        return None
    w = o.w
    full = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    a = np.asarray(o.a, dtype=np.int64).view(np.uint64) & full
    pos, ln = np.asarray(o.s[1], dtype=np.int64) & 0xFF, np.asarray(o.s[2], dtype=np.int64) & 0xFF
    take = np.clip(np.minimum(ln, w - pos), 0, w)  # the bits of a the field holds
    low = np.where(take >= 64, full, (np.uint64(1) << np.minimum(take, 63).astype(np.uint64)) - np.uint64(1))
    field = np.where(pos >= w, np.uint64(0), a >> np.minimum(pos, 63).astype(np.uint64)) & low
    top = np.minimum(pos + ln - 1, w - 1).clip(0).astype(np.uint64)
    sbit = ((a >> top) & np.uint64(1)).astype(bool) & (ln > 0) if o.signed else np.zeros(a.shape, dtype=bool)
    d = np.where(sbit, field | (full & ~low), field)
    return o.wrap(d.view(np.int64))


def _past_a_byte(o: _Args, *fields) -> bool:
    """A 64-bit bit-field position or length past 255: the GPU does not take their low byte there
    as the ISA says (measured: gpu_checks/results/h100-2026-12-07-ptx-semantics.json.gz), so the
    result is left unknown."""
    return o.w == 64 and any(np.any((np.asarray(f, dtype=np.int64) & 0xFFFFFFFF) > 255) for f in fields)


def _bfi(o: _Args):
    """The ISA's pseudo-code: ``len`` bits of ``a`` into ``b`` from ``pos`` (each its low byte),
    what lies past the width dropped.

    >>> hex(int(compute("bfi.b32", [np.array([0xF]), np.array([0]), np.array([30]), np.array([8])], [])[0]))
    '0xc0000000'
    """
    if _past_a_byte(o, o.s[2], o.s[3]):
        return None
    b = np.asarray(o.s[1], dtype=np.int64).view(np.uint64)
    a = np.asarray(o.a, dtype=np.int64).view(np.uint64)
    pos, ln = np.asarray(o.s[2], dtype=np.int64) & 0xFF, np.asarray(o.s[3], dtype=np.int64) & 0xFF
    take = np.clip(np.minimum(ln, o.w - pos), 0, 64)
    ones = np.where(take >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(take, 63).astype(np.uint64)) - np.uint64(1))  # fmt: skip
    shift = np.minimum(pos, 63).astype(np.uint64)
    m = np.where(pos >= o.w, np.uint64(0), ones << shift)
    return o.wrap(((b & ~m) | ((a << shift) & m)).view(np.int64))


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
COMPUTED = frozenset(_RULES)  # the opcodes compute evaluates


def _known(s: list, n: int) -> bool:
    return len(s) >= n and all(x is not None for x in s[:n])


def compute(opcode: str, s: list[np.ndarray | None], raw: list[str]) -> np.ndarray | None:
    """One instruction's per-thread result from its sources' values (``None``: not known), by
    its opcode's rule in :data:`_RULES`.

    >>> compute("add.s32", [np.array([1, 2]), np.array([4, 4])], []).tolist()
    [5, 6]
    """
    rule = _RULES.get(opcode.split(".", 1)[0])
    if rule is None or not _known(s, rule[0]) or not measured(opcode):
        return None
    return rule[1](_Args(opcode, s))
