"""Every notation users bring, behind one entry point.

``parse_layout`` detects the notation (Triton attribute, CuTe swizzle, explicit bases, formula, a TMA
box ``tma:128B``), parses it for a shape, and says whether the result is a distributed or a memory
layout.

>>> p = parse_layout("32*m + n", shape=[16, 32])
>>> p.notation, p.kind, p.layout.out_dims
('formula', 'memory', (('dim0', 16), ('dim1', 32)))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from bankproof.models import dtypes
from bankproof.models.errors import InputError, excerpt, is_pow2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout, layout_from_offsets
from bankproof.models.notation import triton as triton_notation
from bankproof.models.notation import triton_mfma  # noqa: F401 - registers the mfma, wmma and rotating attribute kinds
from bankproof.models.notation.bases import bases_text, parse_bases
from bankproof.models.notation.cute import in_bytes, parse_cute, to_cute
from bankproof.models.notation.cute_dsl import cute_dsl_text, is_cute_dsl
from bankproof.models.notation.formula import default_names, formula_text, parse_formula
from bankproof.models.notation.gluon import gluon_attribute, gluon_shape, is_gluon

MAX_ELEMENTS_LOG2 = 24  # layouts read by evaluating every element; larger tensors are refused, this named
MAX_BASES_LOG2 = 30  # layouts given as bases (or built from them: Triton's attributes) answer from the bases
NOTATIONS = ("triton", "cute", "bases", "formula", "tma")
CUTE_START = (
    r"(?:cute::)?(?:Sw|S|Swizzle|Layout|ComposedLayout)\s*<|(?:cute::)?(?:composition|make_layout|"
    r"make_composed_layout|tile_to_shape)\s*\(|_\d+\s*:|(?:cute::)?(?:GMMA::)?Layout_(?:K|MN)_\w+_Atom\s*<"
)


@dataclass(frozen=True)
class ParsedLayout:
    """A parsed layout: its ``notation``, ``kind`` (``distributed`` or ``memory``), the
    ``layout`` itself, the typed ``source`` when the notation has one, and dim ``names``."""

    notation: str
    kind: str
    layout: LinearLayout | PaddedLayout
    names: tuple[str, ...]
    source: object = None
    warnings: tuple[str, ...] = ()

    @property
    def shape(self) -> list[int]:
        lin = self.layout.linear if isinstance(self.layout, PaddedLayout) else self.layout
        return [s for _, s in lin.out_dims]


def detect(text: str) -> str:
    """Which notation ``text`` is written in.

    >>> [detect(t) for t in ("#ttg.blocked<{}>", "Sw<3,2,3> o (8,8):(1,8)", '{"offset": []}', "m + 2*n")]
    ['triton', 'cute', 'bases', 'formula']
    >>> detect("tma:128B")
    'tma'

    """
    t = text.strip()
    for prefix in NOTATIONS:
        if t.startswith(prefix + ":"):
            return prefix
    if t.startswith("#"):
        return "triton"
    if re.match(CUTE_START, t) or (t.startswith("(") and "):(" in t.replace(" ", "")):
        return "cute"
    if t.startswith("{"):
        return "bases"
    return "formula"


def parse_shape(text: str | Sequence[int], max_log2: int = MAX_ELEMENTS_LOG2) -> list[int]:
    """``"16x32"`` (or a list) -> ``[16, 32]``, checking sizes and the limit (2^``max_log2``
    elements: :data:`MAX_ELEMENTS_LOG2` where every element is evaluated, :data:`MAX_BASES_LOG2`
    where the layout is bases)."""
    if isinstance(text, str):
        parts = text.lower().replace("×", "x").split("x")
        try:
            shape = [int(p) for p in parts]
        except ValueError:
            raise InputError("shape", "value", "must look like 16x32 (sizes separated by x)", text) from None
    elif isinstance(text, (list, tuple)):
        try:
            if any(isinstance(s, bool) for s in text):
                raise TypeError("a bool")
            shape = [s.__index__() for s in text]  # ints, and numpy's
        except Exception:  # noqa: BLE001 - a user's object failed to give an integer: name the field
            raise InputError("shape", "value", "sizes must be integers", text) from None
    else:
        raise InputError("shape", "value", "must be text like 16x32 or a list of sizes", text)
    if not shape:
        raise InputError("shape", "value", "must have at least one dim", text)
    for s in shape:
        if not is_pow2(s):
            raise InputError("shape", "value", "sizes must be powers of two", "x".join(map(excerpt, shape)))
    total = sum(s.bit_length() - 1 for s in shape)
    if total > max_log2:
        why = "" if max_log2 == MAX_BASES_LOG2 else f" (2^{MAX_BASES_LOG2} for bases and Triton's attributes)"
        raise InputError(
            "shape",
            "value",
            f"has 2^{total} elements, over the limit of 2^{max_log2}{why}",
            "x".join(map(excerpt, shape)),
        )
    return shape


def foreign_text(obj: object) -> str | None:
    """The notation text of a layout *object* from another library, or None: a Gluon layout
    reads as the Triton attribute it builds, a CuTe DSL (``cutlass``) layout by its fields
    (:mod:`~bankproof.models.notation.cute_dsl`)."""
    if is_gluon(obj):
        return gluon_attribute(obj).text()
    if is_cute_dsl(obj):
        return cute_dsl_text(obj)
    return None


def parse_layout(
    text: object,
    shape: Sequence[int] | None = None,
    *,
    dtype: str | None = None,
    units: str = "element",
    base_align: int = 0,
    names: Sequence[str] | None = None,
    notation: str | None = None,
    stage: int | None = None,
) -> ParsedLayout:
    """Parse ``text`` in its notation for ``shape`` (CuTe and bases may omit the shape). ``text``
    may also be a Gluon or CuTe DSL layout object (:func:`foreign_text`); a Gluon object that
    carries a shape gives the default shape. Text is parsed once per distinct arguments (the last
    few are kept: a batch that reads many layouts with one access layout parses that one once)."""
    if isinstance(text, str) and len(text) <= CACHED_TEXT:
        key = (text, _key(shape), dtype, units, base_align, _key(names), notation, stage)
        try:
            hash(key)
        except TypeError:
            key = None
        if key is not None:
            return _parse_cached(*key)
    return _parse(text, shape, dtype, units, base_align, names, notation, stage)


CACHED_TEXT = 4096  # texts at most this long are kept by the parse cache


def _key(v: object) -> object:
    return tuple(v) if isinstance(v, (list, tuple)) else v


def _parse(text, shape, dtype, units, base_align, names, notation, stage) -> ParsedLayout:
    """:func:`parse_layout`'s work (its arguments, all given)."""
    if not isinstance(text, str) and (foreign := foreign_text(text)) is not None:
        shape = gluon_shape(text) if shape is None and is_gluon(text) else shape
        text = foreign
    if not isinstance(text, str):
        raise InputError("layout", "notation", "must be text in a notation, or a Gluon or CuTe layout", text)
    if not text.strip():
        raise InputError("layout", "notation", "is empty")
    notation = notation or detect(text)
    if notation not in NOTATIONS:
        raise InputError("layout", "notation", f"must be one of {', '.join(NOTATIONS)}", notation)
    t = text.strip()
    if t.startswith(notation + ":") and not t.startswith(notation + "::"):
        t = t[len(notation) + 1 :].strip()
    limit = MAX_BASES_LOG2 if notation in ("triton", "bases") else MAX_ELEMENTS_LOG2  # bases: the larger
    shape = parse_shape(shape, limit) if shape is not None else None

    if notation == "triton":
        src = triton_notation.parse_triton(t)
        if shape is not None and src.kind == "padded_shared":  # its offsets are a table
            parse_shape(shape)
        if shape is None:
            raise InputError("layout", "shape", "is required for Triton notations (e.g. 16x32)")
        # nvmma_shared names the element width it swizzles for, which the dtype must be; an mfma
        # layout's elementBitWidth is its accumulator's, and Triton holds any tensor in it (an f16
        # result after the accumulator is truncated)
        width = getattr(src, "element_bits", None) if src.memory else None
        if width is not None and dtype and width != dtypes.bits(dtype):
            why = f"contradicts the dtype {dtype} ({dtypes.bits(dtype)} bits)"
            raise InputError(src.kind, "elementBitWidth", why, width)
        lay = src.to_layout(shape)
        kind = "memory" if src.memory else "distributed"
    elif notation == "cute":
        elem_bytes = dtypes.bits(dtype) // 8 if dtype else 0
        if units == "byte" and not elem_bytes:
            raise InputError("cute", "dtype", "is required with byte units (the element size)")
        src = parse_cute(t, units, elem_bytes or 1, base_align, len(shape) if shape is not None else None)
        cute_shape = src.tensor_shape
        parse_shape(cute_shape)
        if shape is not None and list(shape) != cute_shape:
            raise InputError(
                "cute",
                "shape",
                f"disagrees with the layout's shape {'x'.join(map(str, cute_shape))}",
                "x".join(map(excerpt, shape)),
            )
        lay, kind = src.memory_layout(stage), "memory"
    elif notation == "tma":
        if shape is None or dtype is None:
            raise InputError("tma", "shape", "and a dtype are required for a TMA box (e.g. 64x64, f16)")
        lay, src = tma_layout(t, shape, dtypes.bits(dtype))
        kind = "memory"
    elif notation == "bases":
        if shape is None:
            raise InputError("layout", "shape", "is required for explicit bases")
        src = None
        lay = parse_bases(t, shape)
        kind = "memory" if "offset" in lay.in_dim_names else "distributed"
    else:
        if shape is None:
            raise InputError("layout", "shape", "is required for formulas")
        src = None
        nm = list(names) if names else default_names(len(shape))
        lay, kind = parse_formula(t, nm, shape), "memory"
    lin = lay.linear if isinstance(lay, PaddedLayout) else lay
    rank = len(lin.out_dims)
    nm = tuple(names) if names else tuple(default_names(rank))
    if len(nm) != rank:
        raise InputError("layout", "dims", f"must name {rank} dims", ",".join(nm))
    warn = src.warnings() if notation == "cute" else ()
    return ParsedLayout(notation, kind, lay, nm, src, warn)


_parse_cached = functools.lru_cache(maxsize=256)(_parse)


def memory_notations(
    layout: LinearLayout, names: Sequence[str], alignment: int = 16, elem_bits: int | None = None
) -> dict[str, str]:
    """Every notation that can express a linear memory layout, by name: explicit bases,
    Triton's ``shared_linear`` (``triton``, with the buffer's byte ``alignment``), and (one CTA)
    ``swizzled_shared`` (only when 16-byte alignment is all the buffer needs: it cannot say
    more), the formula and the CuTe form when they can; with ``elem_bits``, the CuTe form in bytes
    too (``cute_bytes``: what GMMA's atoms and a byte-addressed swizzle spell)."""
    out = {"bases": bases_text(layout), "triton": triton_notation.shared_linear_text(layout, alignment)}
    offsets = _offset_only(layout)
    swz = _swizzled_shared(layout) if alignment <= 16 else None
    if swz is not None:
        out["swizzled_shared"] = swz
    if not layout.in_bases("block") and offsets.is_invertible():
        out["formula"] = formula_text(offsets, names)
        cute = to_cute(offsets)
        if cute is not None:
            out["cute"] = cute.text()
            if elem_bits is not None and elem_bits >= 8 and cute.swizzle is not None:
                sw = in_bytes(cute, elem_bits // 8).swizzle  # CuTe's print of a byte-addressed swizzle
                plain = replace(cute, swizzle=None).text()
                out["cute_bytes"] = f"Sw<{sw.b},{sw.m},{sw.s}> o smem_ptr[{elem_bits}b](unset) o {plain}"
    return out


def _swizzled_shared(layout: LinearLayout) -> str | None:
    swz = None if layout.in_bases("block") else triton_notation.swizzled_shared_for(_offset_only(layout))
    return swz.text() if swz is not None else None


def triton_memory_text(layout: LinearLayout) -> str:
    """The shortest Triton attribute for a memory layout: ``swizzled_shared`` when it can say it,
    else ``shared_linear`` (what :func:`memory_notations` lists, without the other notations)."""
    return _swizzled_shared(layout) or triton_notation.shared_linear_text(layout)


def _offset_only(layout: LinearLayout) -> LinearLayout:
    return LinearLayout((("offset", layout.in_bases("offset")),), layout.out_dims)


def tma_layout(mode_name: str, shape: Sequence[int], elem_bits: int) -> tuple[LinearLayout, object]:
    """The memory layout a TMA load writes a ``rows x cols`` tile in (``tma:MODE``, at a base on the
    mode's period): boxes one swizzle span wide, side by side along the contiguous (last) dim, each
    row one span, the mode's XOR on the byte address (measured on an H100 and an H200).

    >>> lay, box = tma_layout("64B", [8, 32], 16)
    >>> lay.in_bases("offset")[:5], box.cute()
    (((0, 1), (0, 2), (0, 4), (0, 8), (0, 16)), 'Sw<2,4,3> o smem_ptr[16b] o (8,32):(32,1)')
    """
    from bankproof.models.engines.canonical import tma_tile  # the engines import notations

    if len(shape) != 2:
        got = "x".join(map(str, shape))
        raise InputError("tma", "shape", "must be 2-D (rows x contiguous elements)", got)
    box = tma_tile(mode_name.strip(), elem_bits, "K", shape[0], shape[1])
    if box.pitch * 8 != box.cols * elem_bits:
        why = f"is narrower than the {box.mode.name} span: TMA starts each row a span apart, leaving gaps"
        raise InputError("tma", "box", why, f"{shape[1]} x {elem_bits}-bit")
    rows, cols = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    return layout_from_offsets(box.address(rows, cols, 0) * 8 // elem_bits, "tma"), box
