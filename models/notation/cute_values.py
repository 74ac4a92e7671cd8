"""CuTe's values as plain data: ``Swizzle<B,M,S>``, a layout ``shape:stride``, a composed
``swizzle o offset o layout``, named tags, and the GMMA shared-memory layout atoms CuTe defines by
name (``GMMA::Layout_K_SW128_Atom<T>``).

>>> Swizzle(3, 2, 3).apply(32)
36
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bankproof.models.errors import InputError
from bankproof.models.notation.cute_shapes import Nested


@dataclass(frozen=True)
class Swizzle:
    """``Swizzle<B,M,S>``; construction checks validity (no silent identity).

    >>> Swizzle(3, 2, 3).apply(32)
    36
    """

    b: int
    m: int
    s: int

    def __post_init__(self) -> None:
        if max(self.b, self.m, abs(self.s)) > 32:
            raise InputError("cute", "Swizzle", "fields must be at most 32", (self.b, self.m, self.s))
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
        """Swizzle offsets; an involution."""
        y = x & self.mask
        return x ^ (y >> self.s if self.s >= 0 else y << -self.s)

    @property
    def top_bit(self) -> int:
        """One past the highest address bit the swizzle reads or writes."""
        return self.m + abs(self.s) + self.b

    def text(self) -> str:
        return f"Sw<{self.b},{self.m},{self.s}>"


_SWIZZLE_TEXT = re.compile(
    r"^\s*(?:Sw|S|Swizzle)\s*<\s*(-?\d{1,3})\s*,\s*(-?\d{1,3})\s*,\s*(-?\d{1,3})\s*>\s*$"
)


def parse_swizzle(text: str) -> Swizzle:
    """``Sw<B,M,S>`` (also ``S<...>``, ``Swizzle<...>``) as a :class:`Swizzle`.

    >>> parse_swizzle("Sw<3,4,3>").text()
    'Sw<3,4,3>'
    """
    m = _SWIZZLE_TEXT.match(text) if isinstance(text, str) else None
    if not m:
        raise InputError("cute", "Swizzle", "must look like Sw<B,M,S>", text)
    return Swizzle(*(int(g) for g in m.groups()))


@dataclass(frozen=True)
class Layout:
    """A plain CuTe layout ``shape:stride`` (congruent nested tuples)."""

    shape: Nested
    stride: Nested


@dataclass(frozen=True)
class Composed:
    """``swizzle o offset o layout``; ``ptr_bits`` is the element width of a printed
    ``smem_ptr[Nb]`` (the sign of a swizzle of byte addresses), 0 when there is none."""

    swizzle: Swizzle | None
    offset: int
    ptr_bits: int
    layout: Layout


@dataclass(frozen=True)
class Tag:
    """A named value that is not a number: ``LayoutRight``, ``LayoutLeft``, a copy atom's name."""

    name: str
    args: tuple = ()


@dataclass(frozen=True)
class PointerValue:
    bits: int


# CuTe's element types by name, in bits (``sizeof_bits<T>``)
TYPE_BITS = {"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "uint128_t": 128,
             "int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64, "half_t": 16, "bfloat16_t": 16,
             "float": 32, "tfloat32_t": 32, "double": 64, "float_e4m3_t": 8, "float_e5m2_t": 8}  # fmt: skip
GMMA_ATOM = re.compile(r"Layout_(K|MN)_(INTER|SW32|SW64|SW128|SW128_32B)_Atom")
_GMMA_SWIZZLE = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


def gmma_layout_atom(major: str, kind: str, targs: list, error) -> Composed:
    """``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` as CuTe defines it (and UMMA's,
    which are the same, plus ``UMMA::Layout_MN_SW128_32B_Atom<T>``, 32-byte atoms)
    (``mma_traits_sm90_gmma.hpp``): ``upcast<sizeof_bits<T>>`` of the bit-unit atom
    ``Swizzle<B,4,3> o smem_ptr_flag o (8, 128*2^B):(128*2^B, 1)`` (K-major; MN-major transposed),
    so the swizzle acts on byte addresses (the ``smem_ptr[Nb]`` it prints with).

    >>> a = gmma_layout_atom("K", "SW128", [Tag("half_t")], None)
    >>> a.swizzle, a.ptr_bits, a.layout
    (Swizzle(b=3, m=4, s=3), 16, Layout(shape=(8, 64), stride=(64, 1)))
    """
    t = targs[0] if len(targs) == 1 else None
    bits = TYPE_BITS.get(t.name) if isinstance(t, Tag) else None
    if bits is None:
        raise error(f"Layout_{major}_{kind}_Atom<T> takes one element type ({', '.join(TYPE_BITS)})")
    if kind == "SW128_32B":  # UMMA: Swizzle<2,5,2> o (1024,8):(1,1024) bits, as the CuTe DSL builds it
        if major != "MN":
            raise error("UMMA defines the 32-byte-atom SW128 layout M/N-major only: Layout_MN_SW128_32B_Atom")
        width = 1024 // bits
        return Composed(Swizzle(2, 5, 2), 0, bits, Layout((width, 8), (1, width)))
    b = _GMMA_SWIZZLE[kind]
    width = (128 << b) // bits  # elements along the contiguous mode
    layout = Layout((8, width), (width, 1)) if major == "K" else Layout((width, 8), (1, width))
    return Composed(Swizzle(b, 4, 3) if b else None, 0, bits, layout)
