"""CuTe swizzled layouts: ``Sw<B,M,S> o (shape):(stride)``, parsed and printed.

``Swizzle<B,M,S>`` maps an offset x to ``x ^ ((x & yyy) >> S)`` with
``yyy = ((1 << B) - 1) << (M + max(0, S))`` (a negative S shifts left). The layout maps a
coordinate to ``sum(coord_i * stride_i)``; top-level modes are the tensor dims, nested modes are
flattened with their first sub-mode fastest. Units are explicit: ``element`` offsets, or ``byte``
addresses (strides still in elements) of a buffer aligned to ``base_align`` bytes.

>>> L = parse_cute("Sw<3,2,3> o (8,8):(1,8)").memory_layout()
>>> [L.invert().apply(dim0=0, dim1=c)["offset"] % 32 for c in range(8)]
[0, 8, 16, 24, 4, 12, 20, 28]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import layout_from_offsets

Nested = int | tuple  # an int or a tuple of Nested


@dataclass(frozen=True)
class Swizzle:
    """``Swizzle<B,M,S>``; construction checks validity (no silent identity)."""

    b: int
    m: int
    s: int

    def __post_init__(self) -> None:
        if self.b < 0:
            raise InputError("cute", "Swizzle B", "must be >= 0", self.b)
        if self.m < 0:
            raise InputError("cute", "Swizzle M", "must be >= 0", self.m)
        if abs(self.s) < self.b:
            raise InputError(
                "cute",
                "Swizzle S",
                f"must satisfy |S| >= B = {self.b} (source and target bits overlap)",
                self.s,
            )

    @property
    def mask(self) -> int:
        return ((1 << self.b) - 1) << (self.m + max(0, self.s))

    def apply(self, x):  # int or numpy array
        """Swizzle offsets; an involution.

        >>> Swizzle(3, 2, 3).apply(32)
        36
        """
        y = x & self.mask
        return x ^ (y >> self.s if self.s >= 0 else y << -self.s)

    @property
    def top_bit(self) -> int:
        """One past the highest address bit the swizzle reads or writes."""
        return self.m + abs(self.s) + self.b

    def text(self) -> str:
        return f"Sw<{self.b},{self.m},{self.s}>"


@dataclass(frozen=True)
class CuteLayout:
    """A swizzle (or none) composed with a stride layout, in given units."""

    swizzle: Swizzle | None
    shape: tuple[Nested, ...]
    stride: tuple[Nested, ...]
    units: str = "element"
    elem_bytes: int = 1
    base_align: int = 0

    def coord_offsets(self) -> np.ndarray:
        """Element offset of every coordinate, as an array of the tensor's shape (dim0 first)."""
        dims = [_size(m) for m in self.shape]
        grids = np.meshgrid(*[np.arange(d, dtype=np.int64) for d in dims], indexing="ij")
        off = np.zeros(dims, dtype=np.int64)
        for g, mshape, mstride in zip(grids, self.shape, self.stride):
            off += _mode_offset(g, mshape, mstride)
        if self.swizzle is None:
            return off
        if self.units == "element":
            return self.swizzle.apply(off)
        addr = self.swizzle.apply(off * self.elem_bytes)
        return addr // self.elem_bytes

    def memory_layout(self) -> LinearLayout:
        """The memory layout ``offset -> (dim0, dim1, ...)``; errors when not an F2-linear
        bijection onto ``[0, size)``."""
        self._check_units()
        off = self.coord_offsets()
        return layout_from_offsets(off, "cute")

    def _check_units(self) -> None:
        sw = self.swizzle
        if sw is None or self.units == "element":
            return
        eb = log2(self.elem_bytes)
        if sw.b and sw.m < eb:
            raise InputError(
                "cute",
                "Swizzle M",
                f"must be >= {eb} for byte addresses of {self.elem_bytes}-byte elements "
                "(the swizzle would split elements)",
                sw.m,
            )
        need = 1 << sw.top_bit
        if sw.b and self.base_align % need:
            raise InputError(
                "cute",
                "base_align",
                f"must be a multiple of {need} bytes for {sw.text()} "
                "(otherwise the swizzle depends on where the buffer starts)",
                self.base_align,
            )

    def text(self) -> str:
        body = f"{_fmt(self.shape)}:{_fmt(self.stride)}"
        return f"{self.swizzle.text()} o {body}" if self.swizzle else body


# ----- parsing ---------------------------------------------------------------------------------
_SW = re.compile(
    r"^\s*(?:Sw|Swizzle)\s*<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*(?:\{\s*\})?\s*(?:o|∘)\s*(.*)$", re.S
)


def parse_cute(text: str, units: str = "element", elem_bytes: int = 1, base_align: int = 0) -> CuteLayout:
    """Parse ``[Sw<B,M,S> o ](shape):(stride)``.

    >>> parse_cute("Swizzle<2,0,-3> o ((4,2),8):((1,32),4)").text()
    'Sw<2,0,-3> o ((4,2),8):((1,32),4)'
    """
    if units not in ("element", "byte"):
        raise InputError("cute", "units", "must be 'element' or 'byte'", units)
    text = text.strip()
    swizzle = None
    m = _SW.match(text)
    if m:
        swizzle = Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        text = m.group(4).strip()
    elif re.match(r"^\s*(Sw|Swizzle)\b", text):
        raise InputError("cute", "swizzle", "must look like Sw<B,M,S> o (shape):(stride)", text)
    if ":" not in text:
        raise InputError("cute", "layout", "must look like (shape):(stride)", text)
    shape_txt, _, stride_txt = text.partition(":")
    shape = _parse_nested(shape_txt, "shape")
    stride = _parse_nested(stride_txt, "stride")
    if not isinstance(shape, tuple):
        shape, stride = (shape,), (stride,)
    if not isinstance(stride, tuple) or not _congruent(shape, stride):
        raise InputError(
            "cute", "stride", f"must have the same nesting as the shape {_fmt(shape)}", _fmt(stride)
        )
    for s in _leaves(shape):
        if not is_pow2(s):
            raise InputError("cute", "shape", "sizes must be powers of two", _fmt(shape))
    for s in _leaves(stride):
        if s != 0 and not is_pow2(s):
            raise InputError("cute", "stride", "entries must be powers of two (F2-linear layouts only)", s)
    if units == "byte" and not is_pow2(elem_bytes):
        raise InputError("cute", "dtype", "element size must be a power of two bytes", elem_bytes)
    return CuteLayout(swizzle, shape, stride, units, elem_bytes, base_align)


def _parse_nested(text: str, field: str) -> Nested:
    tokens = re.findall(r"\(|\)|,|_?-?\d+|\S", text)
    pos = 0

    def item(depth: int = 0) -> Nested:
        nonlocal pos
        if depth > 32:
            raise InputError("cute", field, "nests deeper than 32 levels", text.strip()[:40])
        if pos >= len(tokens):
            raise InputError("cute", field, "ends early", text.strip())
        t = tokens[pos]
        if t == "(":
            pos += 1
            items = [item(depth + 1)]
            while pos < len(tokens) and tokens[pos] == ",":
                pos += 1
                items.append(item(depth + 1))
            if pos >= len(tokens) or tokens[pos] != ")":
                raise InputError("cute", field, "has unbalanced parentheses", text.strip())
            pos += 1
            return tuple(items)
        if re.fullmatch(r"_?-?\d+", t):
            pos += 1
            return int(t.lstrip("_"))
        raise InputError("cute", field, f"has unexpected {t!r}", text.strip())

    out = item()
    if pos != len(tokens):
        raise InputError("cute", field, f"has unexpected {tokens[pos]!r}", text.strip())
    return out


def _congruent(a: Nested, b: Nested) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_congruent(x, y) for x, y in zip(a, b))
    return not isinstance(b, tuple)


def _leaves(x: Nested) -> list[int]:
    return [y for z in x for y in _leaves(z)] if isinstance(x, tuple) else [x]


def _size(x: Nested) -> int:
    out = 1
    for v in _leaves(x):
        out *= v
    return out


def _mode_offset(c: np.ndarray, shape: Nested, stride: Nested) -> np.ndarray:
    """Offset contributed by coordinate ``c`` of one mode (sub-modes first-fastest)."""
    out = np.zeros_like(c)
    for s, d in zip(_leaves(shape), _leaves(stride)):
        out += (c % s) * d
        c = c // s
    return out


def _fmt(x: Nested) -> str:
    return "(" + ",".join(_fmt(y) for y in x) + ")" if isinstance(x, tuple) else str(x)


# ----- printing --------------------------------------------------------------------------------
def to_cute(layout: LinearLayout, max_b: int = 6) -> CuteLayout | None:
    """Express a memory layout ``offset -> dims`` as ``Sw<B,M,S> o (shape):(stride)`` in
    element units, with the fewest swizzle bits that act within the buffer (on an 8x8 tile,
    ``Sw<3,2,3>`` and ``Sw<1,2,3>`` are the same map); None when no such form exists.

    >>> to_cute(parse_cute("Sw<3,2,3> o (32,8):(1,32)").memory_layout()).text()
    'Sw<3,2,3> o (32,8):(1,32)'
    """
    if not layout.is_invertible():
        return None
    inv = layout.invert()  # dims -> offset
    n = layout.in_bits
    images = [b[0] for _, bs in inv.bases for b in bs]
    dim_bits = [len(bs) for _, bs in inv.bases]
    candidates = [None] + [
        Swizzle(b, m, s)
        for b in range(1, max_b + 1)
        for m in range(0, n)
        for s in list(range(b, n)) + list(range(-n, -b + 1))
        if m + abs(s) + b <= n
    ]
    for sw in candidates:
        base = [sw.apply(x) if sw else x for x in images]
        if any(x == 0 or x & (x - 1) for x in base):
            continue
        shape, stride, k = [], [], 0
        for nb in dim_bits:
            runs: list[list[int]] = []  # [size, stride, last image] of each contiguous run
            for x in base[k : k + nb]:
                if runs and x == runs[-1][2] << 1:
                    runs[-1][0] *= 2
                    runs[-1][2] = x
                else:
                    runs.append([2, x, x])
            k += nb
            if not runs:
                shape.append(1)
                stride.append(0)
            elif len(runs) == 1:
                shape.append(runs[0][0])
                stride.append(runs[0][1])
            else:
                shape.append(tuple(r[0] for r in runs))
                stride.append(tuple(r[1] for r in runs))
        return CuteLayout(sw, tuple(shape), tuple(stride))
    return None
