"""A layout described: its kind, validity, bases per input dim and, for memory layouts, every
notation that expresses it (``bankproof layout``).

>>> r = describe_layout("32*m + (n ^ (2*m))", "16x32")
>>> r.kind, r.valid, r.notations["swizzled_shared"]
('memory', True, '#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from bankproof.models import dtypes, hardware
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import ParsedLayout, memory_notations, parse_layout
from bankproof.models.notation.padded import padded_notations
from bankproof.models.notation.triton import shared_alignment
from bankproof.verifier.results import LayoutResult


def describe_layout(
    notation: str,
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    units: str = "element",
    base_align: int = 0,
    dims: Sequence[str] | None = None,
    banks: bool = False,
) -> LayoutResult:
    """Parse ``notation`` for ``shape`` and describe it; ``banks`` adds each element's bank."""
    if dims is not None and not isinstance(dims, (list, tuple)):
        raise InputError("layout", "dims", "must be a list of names", dims)
    names = list(dims) if dims is not None else None
    if names is not None and not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise InputError("layout", "dims", "must be identifiers", names)
    parsed = parse_layout(notation, shape, dtype=dtype, units=units, base_align=base_align, names=names)
    if dtype:
        dtypes.bits(dtype)
    fields = describe(parsed)
    if banks:
        if parsed.kind != "memory":
            raise InputError("layout", "banks", "needs a memory layout")
        fields["dtype"] = dtype or "f32"
        fields["banks"] = bank_table(parsed.layout, dtypes.bits(fields["dtype"])).tolist()
    return LayoutResult(**fields, layout=parsed.layout)


def describe(parsed: ParsedLayout) -> dict:
    """The fields (schema 1) of a parsed layout's :class:`LayoutResult`."""
    lay = parsed.layout
    lin = lay.linear if isinstance(lay, PaddedLayout) else lay
    report: dict = {
        "schema": 2,
        "notation": parsed.notation,
        "kind": parsed.kind,
        "in_dims": _in_dims(lin, parsed.kind),
        "out_dims": dict(lin.out_dims),
        "dim_names": tuple(parsed.names),
        "linear": not isinstance(lay, PaddedLayout),
    }
    if isinstance(lay, PaddedLayout):
        report["padding"] = [list(p) for p in lay.intervals]
        report["span_elements"] = lay.span()
        report["notations"] = padded_notations(lay)
    violations = lin.distributed_violations() if parsed.kind == "distributed" else lin.memory_violations()
    report["valid"] = not violations
    report["violations"] = tuple(violations)
    report["injective"] = lin.is_injective()
    report["surjective"] = lin.is_surjective()
    if parsed.kind == "distributed":
        report["broadcast"] = {d: lin.zero_bases(d) for d in lin.in_dim_names if lin.zero_bases(d)}
        report["contiguous_registers"] = lin.contiguous_registers()
    elif not isinstance(lay, PaddedLayout):
        align = parsed.source.mode.period if parsed.notation == "tma" else shared_alignment(parsed.source)
        report["notations"] = memory_notations(lin, parsed.names, max(16, align))
    if parsed.warnings:
        report["warnings"] = tuple(parsed.warnings)
    notes = _cute_round_trip(parsed, report.get("notations") or {})
    if parsed.notation == "tma":
        box = parsed.source
        notes.append(f"CuTe on byte addresses: {box.cute()}; TMA swizzles the absolute shared address, "
                     f"so this layout holds at a base aligned to {max(16, box.mode.period)} bytes "
                     "(bankproof agree checks other bases)")  # fmt: skip
    if notes:
        report["notes"] = tuple(notes)
    return report


def _cute_round_trip(parsed: ParsedLayout, notations: dict) -> list[str]:
    """When a CuTe input is printed back in another form (``Sw<3,2,3>`` on an 8x8 tile comes back
    as ``Sw<1,2,3>``: the swizzle's upper mask bits lie above the layout's offsets), say that the
    two are the same map, having checked it element by element.

    >>> p = parse_layout("Sw<3,2,3> o (8,8):(1,8)")
    >>> _cute_round_trip(p, memory_notations(p.layout, p.names))[0][:60]
    'Sw<3,2,3> o (8,8):(1,8) is printed back as Sw<1,2,3> o (8,8)'
    """
    src = parsed.source
    if (parsed.notation != "cute" or "cute" not in notations or getattr(src, "units", "") != "element"
            or isinstance(parsed.layout, PaddedLayout)):  # fmt: skip
        return []
    given, printed = src.text(), notations["cute"]
    if given == printed:
        return []
    from bankproof.models.notation.cute import parse_cute

    same = parse_cute(printed).memory_layout() == parsed.layout
    if not same:  # to_cute promises the same map: a mismatch is a bug, never a silent claim
        raise AssertionError(f"{printed} is not the layout {given}")
    n = 1 << parsed.layout.in_bits
    why = ""
    if given.split(" o ")[-1] == printed.split(" o ")[-1]:  # only the swizzle differs
        why = ": swizzle bits above the layout's offsets never act"
    return [f"{given} is printed back as {printed}: the same map on these {n} elements (checked element "
            f"by element{why})"]  # fmt: skip


def _in_dims(lin: LinearLayout, kind: str) -> dict:
    d = lin.as_dict()
    if kind == "distributed":
        return {k: d.get(k, []) for k in ("register", "lane", "warp", "block")}
    return {k: v for k, v in d.items() if k == "offset" or v}


def bank_table(layout: LinearLayout | PaddedLayout, elem_bits: int) -> np.ndarray:
    """Bank of every element (of ``elem_bits`` bits; 4-bit elements share bytes), as an array of
    the tensor's shape (dim0 first)."""
    if isinstance(layout, PaddedLayout):
        lin = layout.linear
        phys = layout.physical_offsets()
        coords = lin.table()
        off = np.zeros([s for _, s in lin.out_dims], dtype=np.int64)
        off[tuple(coords.T)] = phys
    else:
        lin = layout.transpose_ins(["offset"] + [d for d in layout.in_dim_names if d != "offset"])
        lin = LinearLayout((("offset", lin.in_bases("offset")),), lin.out_dims)
        coords = lin.table()
        off = np.zeros([s for _, s in lin.out_dims], dtype=np.int64)
        off[tuple(coords.T)] = np.arange(len(coords))
    return hardware.bank(off * elem_bits // 8)


def layout(
    notation: str,
    *,
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    units: str = "element",
    base_align: int = 0,
    dims: Sequence[str] | None = None,
    banks: bool = False,
) -> LayoutResult:
    """Parse a layout in any notation and describe it (``bankproof layout``).

    >>> r = layout("Sw<3,2,3> o (8,8):(1,8)", dtype="f32", banks=True)
    >>> r.kind, r.banks[1][:4]
    ('memory', [1, 9, 17, 25])
    """
    return describe_layout(notation, shape, dtype, units, base_align, dims, banks)


__all__ = ["layout", "describe_layout", "bank_table"]
