"""The engines besides the spec's register accesses that touch a buffer (a spec's ``[[engine]]``
tables), and the memory layouts each can take: the family constrained synthesis searches.

- ``tma = "any"`` (or a mode, or a list of modes): a TMA box reading or writing the whole tile,
  rows along the first dim and the last dim contiguous. A swizzled mode takes one layout, boxes one
  swizzle span wide side by side (a narrower box leaves gaps, a wider one is refused by TMA); with
  no swizzle, boxes of any power-of-two width from 16 bytes to the row (at most 256 elements).
- ``descriptor = "any"`` (or modes) with ``major = "K"`` or ``"MN"``: a wgmma/tcgen05 operand read
  through descriptors with CUTLASS's canonical LBO/SBO; it takes the layout the TMA box of the same
  mode writes, where its reads land on every element the box wrote (checked element by element).

Every layout is taken at a base aligned to the modes' period (1024 bytes covers all of them).

>>> e = read_engines([{"name": "store", "tma": ["32B", "128B"]}], "sm90")[0]
>>> [m.label for m in family(e, [64, 32], 32, "sm90")[0]]
['32B, 4 boxes of 32 bytes', '128B']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.engines.agreement import check
from bankproof.models.engines.canonical import pair
from bankproof.models.engines.placement import TmaBox
from bankproof.models.engines.tma import arch_modes, mode
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout, layout_from_offsets, memory_from_offsets
from bankproof.models.notation import tma_layout

KINDS = ("tma", "descriptor")
# which archs have each engine: TMA from sm90 (Hopper, Blackwell); wgmma descriptors on sm90,
# tcgen05's on sm100; none on sm80 or gfx archs (PTX ISA: cp.async.bulk.tensor sm_90, wgmma sm_90a,
# tcgen05 sm_100a)
ENGINE_ARCHS = {"tma": ("sm90", "sm100"), "descriptor": ("sm90", "sm100")}
ENGINE_NAMES = {"tma": "the TMA unit", "descriptor": "wgmma/tcgen05 descriptors"}
FIELDS = {"name", "major", *KINDS}
MAX_ENGINES = 8


@dataclass(frozen=True)
class EngineSpec:
    """One engine of a spec's ``[[engine]]``: its ``name``, ``kind`` (tma or descriptor), the
    swizzle ``modes`` it may use, and (descriptors) the operand's ``major``."""

    name: str
    kind: str
    modes: tuple[str, ...]
    major: str = "K"


@dataclass(frozen=True)
class Member:
    """One layout an engine can take: ``label`` says how (``128B``, ``none, 2 boxes of 64 bytes``),
    ``operations`` how many the engine issues per tile (TMA boxes)."""

    label: str
    layout: LinearLayout | PaddedLayout
    operations: int = 1  # the engine's operations per tile (TMA boxes; a descriptor's reads: 1)

    @property
    def key(self) -> tuple:
        if isinstance(self.layout, PaddedLayout):
            return (self.layout.linear.in_bases("offset"), self.layout.intervals)
        return self.layout.in_bases("offset")


def read_engines(raw: object, arch: str) -> tuple[EngineSpec, ...]:
    """A spec's ``engine`` list, every field checked and named in errors."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_ENGINES:
        raise InputError("spec", "engine", f"must list 1 to {MAX_ENGINES} [[engine]] tables", raw)
    out: list[EngineSpec] = []
    for i, t in enumerate(raw):
        where = f"engine[{i}]"
        if not isinstance(t, dict):
            raise InputError("spec", where, "must be a table (tma or descriptor)", t)
        for key in t:
            if key not in FIELDS:
                raise InputError(
                    "spec", f"{where}.{key}", f"is not an engine field ({', '.join(sorted(FIELDS))})"
                )
        kinds = [k for k in KINDS if k in t]
        if len(kinds) != 1:
            raise InputError(
                "spec", where, "needs exactly one of tma, descriptor", ", ".join(kinds) or "none"
            )
        kind = kinds[0]
        name = t.get("name", f"{kind} {i}")
        if not isinstance(name, str) or not 0 < len(name) <= 80:
            raise InputError("spec", f"{where}.name", "must be a name of 1 to 80 characters", name)
        if name in {e.name for e in out}:
            raise InputError("spec", f"{where}.name", "repeats another engine's name", name)
        if arch not in ENGINE_ARCHS[kind]:
            has = ", ".join(ENGINE_ARCHS[kind])
            why = f"is not an engine {arch} has ({ENGINE_NAMES[kind]}: {has})"
            raise InputError("spec", f"{where}.{kind}", why, t[kind])
        given, known = t[kind], arch_modes(arch)
        modes = known if given == "any" else (given,) if isinstance(given, str) else given
        if not isinstance(modes, (list, tuple)) or not modes or not all(m in known for m in modes):
            raise InputError(
                "spec", f"{where}.{kind}", f'must be "any" or modes of {arch}: {", ".join(known)}', given
            )
        major = t.get("major", "K")
        if major not in ("K", "MN") or (kind == "tma" and "major" in t):
            raise InputError("spec", f"{where}.major", "is K or MN, for a descriptor", major)
        out.append(EngineSpec(name, kind, tuple(dict.fromkeys(modes)), major))
    return tuple(out)


def family(e: EngineSpec, shape: list[int], elem_bits: int, arch: str) -> tuple[list[Member], list[str]]:
    """The layouts engine ``e`` can take for a ``shape`` tile, and why each other mode cannot."""
    members: list[Member] = []
    refused: list[str] = []
    if len(shape) != 2:
        return [], [f"{e.name}: takes 2-D tiles, not {'x'.join(map(str, shape))}"]
    for m in e.modes:
        try:
            if e.kind == "tma" and m == "none":
                members += _plain_boxes(shape, elem_bits)
                continue
            lay, box = tma_layout(m, shape, elem_bits)
            if e.kind == "descriptor":
                _reads(box, arch, m, elem_bits, e.major, shape)
            boxes = e.kind == "tma" and box.panels > 1  # a descriptor reads the layout whatever wrote it
            label = f"{m}, {box.panels} boxes of {box.cols * elem_bits // 8} bytes" if boxes else m
            members.append(Member(label, lay, box.panels if e.kind == "tma" else 1))
        except InputError as err:
            refused.append(f"{e.name} {m}: {err.problem}")
    return members, refused


PAD_BYTES = (4, 8, 16)  # the padding a row may get (one bank, two, a 16-byte vector's)


def padded_family(shape: list[int], elem_bits: int) -> list[Member]:
    """Plain row-major and column-major layouts of a 2-D tile, and each with every
    :data:`PAD_BYTES` of padding after each row (column): Triton's ``padded_shared`` and CuTe's
    padded strides, weighed against a swizzle (no engine needs them; none takes them)."""
    if len(shape) != 2:
        return []
    eb, out = max(1, elem_bits // 8), []
    rows, cols = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    for order, inner, outer, along in (
        ("row-major", cols, rows, shape[1]),
        ("column-major", rows, cols, shape[0]),
    ):
        for pad_bytes in (0, *PAD_BYTES):
            if pad_bytes % eb or along < 2:
                continue
            offsets = outer * (along + pad_bytes // eb) + inner
            label = order if not pad_bytes else f"{order} + {pad_bytes} bytes"
            out.append(Member(label, memory_from_offsets(offsets, "padded"), 0))
    return out


def _plain_boxes(shape: list[int], elem_bits: int) -> list[Member]:
    """TMA boxes without a swizzle, each power-of-two width from 16 bytes to the row."""
    eb, out = elem_bits // 8, []
    rows, cs = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    cols = 16 // eb
    while cols <= min(shape[1], 256):
        if shape[1] % cols == 0 and cols * eb % 16 == 0:
            box = TmaBox(mode("none"), shape[0], cols, elem_bits, shape[1] // cols)
            n = shape[1] // cols
            label = "none" if n == 1 else f"none, {n} boxes of {cols * eb} bytes"
            out.append(Member(label, layout_from_offsets(box.address(rows, cs, 0) // eb, "tma"), n))
        cols *= 2
    return out


def _reads(box: TmaBox, arch: str, m: str, elem_bits: int, major: str, shape: list[int]) -> None:
    """Raise where the canonical descriptor reads of mode ``m`` do not read the box's layout."""
    mn, k = (shape[0], shape[1]) if major == "K" else (shape[1], shape[0])
    canon, reads = pair(arch, m, elem_bits, major, mn, k)
    for r in reads:
        got = check(canon, r, 0)
        if not got.agree:
            raise InputError("descriptor", m, f"reads {got.mismatches} elements off the box's layout")


__all__ = ["EngineSpec", "Member", "family", "padded_family", "read_engines"]
