"""CuTe swizzled layouts: ``Sw<B,M,S> o (shape):(stride)`` and every printed form of it.

``Swizzle<B,M,S>`` maps an offset x to ``x ^ ((x & yyy) >> S)`` with
``yyy = ((1 << B) - 1) << (M + max(0, S))`` (a negative S shifts left). The layout maps a
coordinate to ``sum(coord_i * stride_i)``; top-level modes are the tensor dims, nested modes are
flattened with their first sub-mode fastest. Units are explicit: ``element`` offsets, or ``byte``
addresses (strides still in elements) of a buffer aligned to ``base_align`` bytes.

The text may be any form :mod:`~bankproof.models.notation.cute_expr` reads (C++ ``print``, the
DSL's print, ``composition(...)``, ``make_layout(...)``, ``tile_to_shape(...)``); a last mode of
pipeline stages (``(_128,_64,_3):(_64,_1,_8192)``) is checked stage by stage.

>>> L = parse_cute("Sw<3,2,3> o (8,8):(1,8)").memory_layout()
>>> [L.invert().apply(dim0=0, dim1=c)["offset"] % 32 for c in range(8)]
[0, 8, 16, 24, 4, 12, 20, 28]
>>> parse_cute("S<3,4,3> o 0 o (8,64):(64,1)").text("cpp")
'Sw<3,4,3> o _0 o (_8,_64):(_64,_1)'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout, memory_from_offsets
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_shapes import Nested, evaluate, fmt, fmt_make, fmt_type, leaves, size
from bankproof.models.notation.cute_values import Composed, Layout, Swizzle

MAX_SPAN = 1 << 32  # elements a layout may span (offsets stay far inside 64-bit arithmetic)
STYLES = ("bankproof", "cpp", "dsl", "composition", "type")
# GMMA / TMA swizzle atoms of byte addresses: SW32, SW64, SW128 (cute/atom/mma_traits_sm90_gmma.hpp)
BYTE_ATOMS = {Swizzle(1, 4, 3): "SW32", Swizzle(2, 4, 3): "SW64", Swizzle(3, 4, 3): "SW128"}


@dataclass(frozen=True)
class CuteLayout:
    """A swizzle (or none) composed with an offset and a stride layout, in given units.
    ``stages`` > 0 when the last top-level mode is a pipeline-stage mode, not a tensor dim."""

    swizzle: Swizzle | None
    shape: tuple[Nested, ...]
    stride: tuple[Nested, ...]
    units: str = "element"
    elem_bytes: int = 1
    base_align: int = 0
    offset: int = 0
    ptr_bits: int = 0
    stages: int = 0
    assumed_align: bool = False  # base_align assumed (the swizzle's span) for a smem_ptr print

    @property
    def tensor_shape(self) -> list[int]:
        """The tensor's dims (the stage mode left out)."""
        modes = self.shape[:-1] if self.stages else self.shape
        return [size(m) for m in modes]

    def coord_offsets(self) -> np.ndarray:
        """Element offset of every coordinate, as an array of the layout's shape (dim0 first;
        the stage last when there is one)."""
        dims = [size(m) for m in self.shape]
        grids = np.meshgrid(*[np.arange(d, dtype=np.int64) for d in dims], indexing="ij")
        off = np.full(dims, self.offset, dtype=np.int64)
        for g, mshape, mstride in zip(grids, self.shape, self.stride):
            off += evaluate(mshape, mstride, g)
        if self.swizzle is None:
            return off
        if self.units == "element":
            return self.swizzle.apply(off)
        addr = self.swizzle.apply(off * self.elem_bytes)
        return addr // self.elem_bytes

    def memory_layout(self, stage: int | None = None) -> LinearLayout | PaddedLayout:
        """The memory layout ``offset -> (dim0, dim1, ...)``: F2-linear when the offsets fill
        ``[0, size)``, a linear layout with padding when they skip elements after power-of-two
        intervals (a stride of 132 on 128-element rows), else an error. With stages, every stage
        is checked: each one's offsets, less its start, must be the same layout (or ``stage``
        picks one)."""
        self._check_units()
        off = self.coord_offsets()
        if not self.stages:
            if self.offset:
                off = _local(off, "cute", self.elem_bytes)
            return memory_from_offsets(off, "cute")
        if stage is not None and not (isinstance(stage, int) and 0 <= stage < self.stages):
            raise InputError("cute", "stage", f"must be an integer in [0, {self.stages})", stage)
        picks = range(self.stages) if stage is None else [stage]
        layouts = []
        for s in picks:
            where = f"cute: stage {s}"
            layouts.append(memory_from_offsets(_local(off[..., s], where, self.elem_bytes), where))
        for s, lay in zip(picks, layouts):
            if lay != layouts[0]:
                raise InputError(
                    "cute",
                    "stage",
                    f"is needed: stage {s} lays the tile out differently from stage {picks[0]} "
                    "(the swizzle reaches the stage offset); name the stage to check",
                )
        return layouts[0]

    def _check_units(self) -> None:
        sw = self.swizzle
        if self.ptr_bits and self.units == "byte" and self.ptr_bits != 8 * self.elem_bytes:
            raise InputError(
                "cute",
                "dtype",
                f"is {8 * self.elem_bytes}-bit but the layout was printed for smem_ptr[{self.ptr_bits}b]",
            )
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
        if sw.b and (self.base_align <= 0 or self.base_align % need):
            raise InputError(
                "cute",
                "base_align",
                f"must be a multiple of {need} bytes for {sw.text()} "
                "(otherwise the swizzle depends on where the buffer starts)",
                self.base_align,
            )

    def warnings(self) -> tuple[str, ...]:
        """The unit trap: a swizzle that reads as a byte-address atom given in element units.

        >>> parse_cute("S<3,4,3> o 0 o (8,64):(64,1)", elem_bytes=2).warnings()[0][:46]
        'Sw<3,4,3> matches the 16-byte pattern of SW128'
        """
        sw, out = self.swizzle, []
        if self.ptr_bits and sw is not None and self.assumed_align:
            out.append(
                f"smem_ptr[{self.ptr_bits}b]: {sw.text()} acts on byte addresses and is read so, with the "
                f"buffer assumed aligned to {self.base_align} bytes (give base_align to say otherwise)"
            )
        if self.units != "element" or sw is None:
            return tuple(out)
        if sw in BYTE_ATOMS and self.elem_bytes > 1 and not self.ptr_bits:
            out.append(
                f"{sw.text()} matches the 16-byte pattern of {BYTE_ATOMS[sw]} (GMMA/TMA), a swizzle of "
                f"byte addresses, but element units of {8 * self.elem_bytes}-bit elements were given; "
                "if it came from a GMMA atom or a DSL print, give units = byte and base_align"
            )
        return tuple(out)

    def text(self, style: str = "bankproof") -> str:
        """The layout printed: ``bankproof`` (``Sw<3,3,3> o (8,64):(64,1)``), ``cpp`` (C++
        ``print``), ``dsl`` (the Python DSL's print), ``composition`` (a C++ expression) or
        ``type`` (the C++ type).

        >>> lay = parse_cute("Sw<3,3,3> o (8,64):(64,1)")
        >>> lay.text("dsl")
        'S<3,3,3> o 0 o (8,64):(64,1)'
        >>> lay.text("type")
        'ComposedLayout<Swizzle<3,3,3>,_0,Layout<Shape<_8,_64>,Stride<_64,_1>>>'
        """
        sw = self.swizzle
        if style not in STYLES:
            raise InputError("cute", "style", f"must be one of {', '.join(STYLES)}", style)
        shape, stride = self.shape, self.stride
        swt = f"{sw.b},{sw.m},{sw.s}" if sw else ""
        mid = f"smem_ptr[{self.ptr_bits}b](unset)" if self.ptr_bits else None
        plain = not sw and not self.offset and not mid
        if style == "bankproof":
            body = f"{fmt(shape)}:{fmt(stride)}"
            front = [f"Sw<{swt}>"] if sw else []
            front += [mid] if mid else ([str(self.offset)] if self.offset else [])
            return " o ".join([*front, body])
        if style in ("cpp", "dsl"):
            cpp = style == "cpp"
            body = f"{fmt(shape, style)}:{fmt(stride, style)}"
            if plain:
                return body
            off = mid or (f"_{self.offset}" if cpp else str(self.offset))
            return f"{'Sw' if cpp else 'S'}<{swt or '0,4,3'}> o {off} o {body}"
        if style == "composition":
            lay = f"make_layout({fmt_make(shape, 'make_shape')}, {fmt_make(stride, 'make_stride')})"
            if plain:
                return lay
            sw_text = f"Swizzle<{swt or '0,4,3'}>{{}}"
            if self.offset or mid:
                off = f"smem_ptr_flag_bits<{self.ptr_bits}>{{}}" if mid else f"Int<{self.offset}>{{}}"
                return f"make_composed_layout({sw_text}, {off}, {lay})"
            return f"composition({sw_text}, {lay})"
        lay = f"Layout<{fmt_type(shape, 'Shape')},{fmt_type(stride, 'Stride')}>"
        if plain:
            return lay
        off = f"smem_ptr_flag_bits<{self.ptr_bits}>" if mid else f"_{self.offset}"
        return f"ComposedLayout<Swizzle<{swt or '0,4,3'}>,{off},{lay}>"


def _local(off: np.ndarray, where: str, elem_bytes: int) -> np.ndarray:
    """A stage's (or an offset layout's) element offsets less its start, and less a constant XOR
    of whole 16-byte chunks (the image of coordinate 0): neither moves any access to another bank
    or phase, so every wavefront count is the local layout's.

    >>> _local(np.array([[72, 73], [64, 65]]), "stage", 2).tolist()
    [[0, 1], [8, 9]]
    """
    chunk = max(1, 16 // elem_bytes)
    start = int(off.min())
    local = off - start
    xor = int(local.reshape(-1)[0])
    for shift in (start, xor):
        if shift % chunk:
            raise InputError(
                where,
                "layout",
                f"starts {shift} elements off a 16-byte boundary (bank phases would shift)",
            )
    return local ^ xor


def parse_cute(
    text: str,
    units: str = "element",
    elem_bytes: int = 1,
    base_align: int = 0,
    tensor_rank: int | None = None,
) -> CuteLayout:
    """Parse a CuTe layout in any form :mod:`cute_expr` reads. A last top-level mode of rank
    >= 3 that is not a power of two (or one mode beyond ``tensor_rank``) is a pipeline-stage mode.

    >>> parse_cute("Swizzle<2,0,-3> o ((4,2),8):((1,32),4)").text()
    'Sw<2,0,-3> o ((4,2),8):((1,32),4)'
    >>> parse_cute("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64,_3):(_64,_1,_512)").stages
    3
    """
    if units not in ("element", "byte"):
        raise InputError("cute", "units", "must be 'element' or 'byte'", units)
    if isinstance(base_align, bool) or not isinstance(base_align, int) or not 0 <= base_align <= 1 << 40:
        raise InputError("cute", "base_align", "must be an integer number of bytes (0 to 2^40)", base_align)
    value = read(text)
    if isinstance(value, Layout):
        value = Composed(None, 0, 0, value)
    if not isinstance(value, Composed):
        raise InputError(
            "cute", "layout", "must look like (shape):(stride) or Sw<B,M,S> o (shape):(stride)", text
        )
    shape, stride = value.layout.shape, value.layout.stride
    if not isinstance(shape, tuple):
        shape, stride = (shape,), (stride,)
    stages = 0
    last = shape[-1]
    if not isinstance(last, tuple) and (
        (len(shape) > 2 and not is_pow2(last)) or (tensor_rank is not None and len(shape) == tensor_rank + 1)
    ):
        stages = last
        if stages < 1:
            raise InputError("cute", "shape", "stage count must be >= 1", stages)
    for s in leaves(shape[:-1] if stages else shape):
        if not is_pow2(s):
            raise InputError("cute", "shape", "sizes must be powers of two", fmt(shape))
    for s in leaves(stride[:-1] if stages else stride):
        if s < 0:
            raise InputError("cute", "stride", "entries must be >= 0 (shared memory grows upward)", s)
    top = value.offset + sum((n - 1) * t for n, t in zip(leaves(shape), leaves(stride)))
    if top >= MAX_SPAN:
        why = f"spans {top + 1} elements, more than 2^32 (no shared memory is so large)"
        raise InputError("cute", "stride", why)
    if units == "byte" and not is_pow2(elem_bytes):
        raise InputError("cute", "dtype", "element size must be a power of two bytes", elem_bytes)
    if value.offset < 0:
        raise InputError("cute", "offset", "must be >= 0", value.offset)
    assumed = False
    if value.ptr_bits:  # CuTe's smem_ptr swizzle acts on byte addresses, whatever units were given
        if elem_bytes > 1 and 8 * elem_bytes != value.ptr_bits:
            raise InputError(
                "cute", "dtype",
                f"is {8 * elem_bytes}-bit but the layout was printed for smem_ptr[{value.ptr_bits}b]",
            )  # fmt: skip
        units, elem_bytes = "byte", max(1, value.ptr_bits // 8)
        if value.swizzle is not None and not base_align:
            base_align, assumed = 1 << value.swizzle.top_bit, True
    return CuteLayout(value.swizzle, shape, stride, units, elem_bytes, base_align, value.offset,
                      value.ptr_bits, stages, assumed)  # fmt: skip


# ----- printing --------------------------------------------------------------------------------
def in_bytes(cute: CuteLayout, elem_bytes: int) -> CuteLayout:
    """An element-unit layout over ``elem_bytes``-byte elements with its swizzle on byte addresses
    (CuTe's ``smem_ptr[16b]`` convention, GMMA's atoms: the strides stay in elements, the swizzle's
    base ``M`` goes up by log2 of the element size, since the XOR moves with the address's bits).

    >>> in_bytes(parse_cute("Sw<3,3,3> o (8,64):(64,1)"), 2).swizzle
    Swizzle(b=3, m=4, s=3)
    """
    k = elem_bytes.bit_length() - 1
    sw = cute.swizzle if cute.swizzle is None else Swizzle(cute.swizzle.b, cute.swizzle.m + k, cute.swizzle.s)
    return replace(cute, swizzle=sw, units="byte", elem_bytes=elem_bytes)


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
