"""A writer's or reader's placement from its spec table (``[writer]`` / ``[reader]`` of an ``agree``
spec, or the API's dicts), every field checked and named in errors.

One of three kinds, told apart by the key that names it:

- ``tma = "128B"`` with ``box = [rows, cols]`` (and ``panels``): a TMA box in that swizzle mode;
- ``descriptor = "0x..."`` (the 64-bit value; its start address is absolute) or ``swizzle``,
  ``lbo``, ``sbo``, ``start`` (bytes after the tile's base), ``base_offset``; with ``major``,
  ``rows``, ``k_steps``, ``step_bytes``, ``k_origin``: the tile a wgmma/tcgen05 operand reads;
- ``layout = NOTATION`` (any memory notation, element offsets), with ``swizzle = "Sw<B,M,S>"`` (a
  byte XOR software computes) and ``xor = "relative" | "absolute"``: st/stmatrix/cp.async writers,
  ld/ldmatrix readers. A CuTe layout on a swizzled smem pointer (``Sw<3,4,3> o smem_ptr[16b] o
  ...``) carries its swizzle, applied to the absolute address as CuTe does (``xor`` defaults to
  ``absolute`` there).

>>> p = placement({"tma": "64B", "box": [8, 32]}, "writer", 16, "sm90", 0)
>>> p.text()
'TMA 64B box 8x32 (16-bit)'
"""

from __future__ import annotations

import dataclasses
import re

from bankproof.models.engines.descriptors import Descriptor, decode
from bankproof.models.engines.placement import DescriptorRead, LayoutPlacement, Placement, TmaBox
from bankproof.models.engines.tma import MODES, arch_modes, mode
from bankproof.models.errors import InputError, excerpt
from bankproof.models.notation import parse_layout
from bankproof.models.notation.cute_values import parse_swizzle

KINDS = {"tma": ("box", "panels"),
         "descriptor": ("major", "rows", "k_steps", "step_bytes", "k_origin", "swizzle", "lbo", "sbo",
                        "start", "instruction", "operand",
                        "base_offset", "lbo_mode"),
         "layout": ("swizzle", "xor", "shape")}  # fmt: skip


def _int(t: dict, key: str, where: str, default: int | None = None, lo: int = 0, hi: int = 1 << 20) -> int:
    v = t.get(key, default)
    if v is None:
        raise InputError(where, key, "is missing")
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InputError(where, key, f"must be an integer from {lo} to {hi}", v)
    return v


def _str(t: dict, key: str, where: str, default: str | None = None) -> str:
    v = t.get(key, default)
    if not isinstance(v, str):
        raise InputError(where, key, "must be a string" if key in t else "is missing", v)
    return v


def _kind(t: object, where: str) -> str:
    if not isinstance(t, dict):
        raise InputError(where, "table", "must be a table (tma, descriptor or layout)", t)
    named = [k for k in KINDS if k in t]
    if len(named) != 1:
        raise InputError(
            where, "kind", "needs exactly one of tma, descriptor, layout", ", ".join(named) or "none"
        )
    kind = named[0]
    allowed = {kind, *KINDS[kind]}
    for key in t:
        if key not in allowed:
            raise InputError(
                where, str(key), f"is not a field of a {kind} placement ({', '.join(sorted(allowed))})"
            )
    return kind


def placement(t: object, where: str, elem_bits: int, arch: str, base: int) -> Placement:
    """The placement a spec table describes (``base``: the tile's shared address, for a descriptor
    given as a value, whose start address is absolute)."""
    kind = _kind(t, where)
    assert isinstance(t, dict)
    if kind == "tma":
        box = t.get("box")
        if not (isinstance(box, list) and len(box) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in box)):  # fmt: skip
            raise InputError(where, "box", "must be [rows, columns] (integers)", box)
        name = _str(t, "tma", where)
        names = arch_modes(arch)
        if name not in names:
            raise InputError(where, "tma", f"must be a swizzle mode of {arch}: {', '.join(names)}", name)
        return TmaBox(mode(name), box[0], box[1], elem_bits, _int(t, "panels", where, 1, 1, 64))
    if kind == "descriptor":
        if "instruction" in t:
            rows = _instruction_rows(t, where, elem_bits)
        else:
            rows = _int(t, "rows", where, 64, 8, 256)
        return DescriptorRead(descriptor(t, where, arch, base), _str(t, "major", where, "K"), elem_bits,
                              rows, _int(t, "k_steps", where, 1, 1, 64),
                              _int(t, "step_bytes", where, 0, 0, 1 << 18),
                              _int(t, "k_origin", where, 0, 0, 4096))  # fmt: skip
    text = _str(t, "layout", where)
    shape = t.get("shape")
    parsed = parse_layout(text, shape, dtype={8: "i8", 16: "f16", 32: "f32", 64: "f64"}[elem_bits])
    if parsed.kind != "memory":
        raise InputError(where, "layout", "must be a memory layout (element offsets)", text)
    from bankproof.models.access import element_offsets

    src = parsed.source
    if parsed.notation == "cute" and getattr(src, "units", "") == "byte" and src.swizzle is not None:
        # a swizzled smem pointer (smem_ptr[16b]): CuTe applies the swizzle to the pointer's own,
        # absolute, byte address; the layout gives the element offsets before it
        if "swizzle" in t:
            raise InputError(where, "swizzle", "is already in the CuTe layout (its swizzled smem_ptr)")
        if src.stages:
            raise InputError(where, "layout", "must be one tile (no pipeline-stage mode)", text)
        offsets = dataclasses.replace(src, swizzle=None).coord_offsets()
        sw, xor = src.swizzle, _str(t, "xor", where, "absolute")
    else:
        offsets = element_offsets(parsed.layout)
        sw = parse_swizzle(_str(t, "swizzle", where)) if "swizzle" in t else None
        xor = _str(t, "xor", where, "relative")
    if offsets.ndim != 2:
        raise InputError(where, "layout", "must describe a 2-D tile", "x".join(map(str, offsets.shape)))
    return LayoutPlacement(offsets, elem_bits, sw, xor, f"layout {excerpt(text)}")


def _instruction_rows(t: dict, where: str, elem_bits: int) -> int:
    """The operand's rows from an MMA shape ``mMnNkK`` (``operand`` A: M, B: N), whose K must be one
    32-byte step of the dtype (wgmma: k16 for 16-bit, k8 for tf32, k32 for 8-bit)."""
    if "rows" in t:
        raise InputError(where, "rows", "comes from the instruction shape: give one or the other")
    m = re.fullmatch(r"m(\d{1,3})n(\d{1,3})k(\d{1,3})", _str(t, "instruction", where).strip())
    if not m:
        raise InputError(where, "instruction", "must be an MMA shape like m64n128k16", t["instruction"])
    mm, nn, kk = (int(g) for g in m.groups())
    if kk * elem_bits != 256:
        raise InputError(where, "instruction", f"K must be one 32-byte step of {elem_bits}-bit elements "
                         f"(k{256 // elem_bits})", t["instruction"])  # fmt: skip
    operand = _str(t, "operand", where, "B")
    if operand not in ("A", "B"):
        raise InputError(where, "operand", "must be A or B", operand)
    rows = mm if operand == "A" else nn
    if rows % 8 or not 8 <= rows <= 256:
        why = f"gives {rows} rows for {operand}: must be 8 to 256, a multiple of 8"
        raise InputError(where, "instruction", why, t["instruction"])
    return rows


def descriptor(t: dict, where: str, arch: str, base: int) -> Descriptor:
    """The descriptor a ``[writer]``/``[reader]`` table (or ``--fields``) gives, its start taken
    relative to ``base``; fields checked and named."""
    if "descriptor" in t and isinstance(t["descriptor"], str) and t["descriptor"].strip().lower() != "fields":
        text = t["descriptor"].strip().lower()
        clash = [k for k in ("swizzle", "lbo", "sbo", "start", "base_offset", "lbo_mode") if k in t]
        if clash:
            raise InputError(where, clash[0], "comes from the descriptor's value: give one or the other")
        try:
            value = int(text, 16) if text.startswith("0x") else int(text)
        except ValueError:
            why = 'must be a 64-bit integer (0x... hex or decimal) or "fields"'
            raise InputError(where, "descriptor", why,
                             t["descriptor"]) from None  # fmt: skip
        d = decode(value, arch)
        if d.start < base:
            why = f"is below the tile's base {base}: the value's start address is absolute"
            raise InputError(where, "descriptor start address", why, d.start)
        return Descriptor(arch, d.start - base, d.lbo, d.sbo, d.base_offset, d.swizzle, d.lbo_mode)
    if t.get("descriptor") != "fields":
        raise InputError(where, "descriptor", 'must be the 64-bit value or "fields"', t.get("descriptor"))
    name = _str(t, "swizzle", where, "none")
    codes = ("none", "32B", "64B", "128B") + (("128B_atom32",) if arch == "sm100" else ())
    if name not in codes:
        raise InputError(where, "swizzle", f"must be one of {', '.join(codes)} on {arch}", name)
    offs = {
        k: _int(t, k, where, 16 if k != "start" else 0, 0, (1 << 18) - 16) for k in ("lbo", "sbo", "start")
    }
    for k, v in offs.items():
        if v % 16:
            raise InputError(where, k, "must be a multiple of 16 bytes (the encoding drops 4 bits)", v)
    return Descriptor(arch, offs["start"], offs["lbo"], offs["sbo"], _int(t, "base_offset", where, 0, 0, 7),
                      MODES[name], _int(t, "lbo_mode", where, 0, 0, 1 if arch == "sm100" else 0))  # fmt: skip


__all__ = ["descriptor", "placement"]
