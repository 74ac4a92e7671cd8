"""How a tile is commonly moved through the engines: TMA writes it in boxes one swizzle span wide
(side by side along the contiguous dimension, as Triton's ``nvmma_shared`` and CUTLASS's GMMA atoms
place them), and the MMA reads it through descriptors with the canonical LBO/SBO of CUTLASS
``make_gmma_desc`` / ``make_umma_desc``, one descriptor per K step group.

K-major (rows ``mn``, contiguous ``k``): a swizzled span holds ``span / 32`` K steps, advanced by 32
bytes; SBO is 8 rows of the span; LBO is unused (16). Without a swizzle a step spans two 16-byte
panels: LBO is the panel, SBO 8 rows (128 bytes). MN-major (rows ``k``, contiguous ``mn``): LBO jumps
between MN panels, SBO between 8-row K groups (swapped without a swizzle); one descriptor, stepping
32 bytes of K.

>>> box, reads = pair("sm90", "128B", 16, "K", 64, 64)
>>> box.text(), len(reads), reads[0].k_steps, reads[0].desc.sbo
('TMA 128B box 64x64 (16-bit)', 1, 4, 1024)
"""

from __future__ import annotations

import numpy as np
from bankproof.models.engines.descriptors import WIDTH, Descriptor, read_address
from bankproof.models.engines.placement import DescriptorRead, TmaBox
from bankproof.models.engines.tma import mode as tma_mode
from bankproof.models.engines.tma import swizzled
from bankproof.models.errors import InputError


def tma_tile(mode_name: str, elem_bits: int, major: str, mn: int, k: int) -> TmaBox:
    """The TMA boxes that write an ``mn x k`` operand tile (elements of a byte or more: TMA's packed
    4- and 6-bit formats are refused, not modelled)."""
    if elem_bits < 8 or elem_bits % 8:
        raise InputError(
            "tma", "dtype", "must be whole bytes: TMA's packed sub-byte formats are not modelled",
            f"{elem_bits}-bit",
        )  # fmt: skip
    m, eb = tma_mode(mode_name), elem_bits // 8
    rows, inner = (mn, k) if major == "K" else (k, mn)
    cols = min(inner, m.span // eb)
    if inner % cols:
        raise InputError(
            "tile", "contiguous dimension", f"must be a multiple of the span ({m.span} bytes)", inner
        )
    return TmaBox(m, rows, cols, elem_bits, inner // cols)


def pair(arch: str, mode_name: str, elem_bits: int, major: str, mn: int, k: int,
         base_offset: int = 0) -> tuple[TmaBox, list[DescriptorRead]]:  # fmt: skip
    """The TMA writer of an ``mn x k`` tile and the descriptor reads that cover it (descriptor
    starts relative to the tile's base)."""
    box = tma_tile(mode_name, elem_bits, major, mn, k)
    m, eb = box.mode, elem_bits // 8
    panel = box.rows * box.pitch
    if k * eb % 32:
        raise InputError("tile", "k", "must cover whole 32-byte K steps", k)

    def read(start: int, lbo: int, sbo: int, steps: int, origin: int) -> DescriptorRead:
        d = Descriptor(arch, start, lbo, sbo, base_offset, m)
        return DescriptorRead(d, major, elem_bits, mn, steps, 0, origin)

    if major == "MN":
        lbo, sbo = (panel, 8 * m.span) if m.sw.b else (128, panel)
        return box, [read(0, lbo, sbo, k * eb // 32, 0)]
    if not m.sw.b:  # one K step = two 16-byte panels
        return box, [read(2 * s * panel, panel, 128, 1, s * 32 // eb) for s in range(k * eb // 32)]
    per = box.cols * eb // 32  # K steps in one panel
    return box, [read(p * panel, 16, 8 * m.span, per, p * box.cols) for p in range(box.panels)]


def derive(offsets: np.ndarray, mode_name: str, major: str, elem_bits: int) -> dict[str, int | None]:
    """The LBO and SBO (bytes) a descriptor needs to read a tile whose element ``(mn, k)`` sits at
    ``offsets[mn, k]`` bytes before the swizzle (CUTLASS ``make_gmma_desc`` / ``make_umma_desc``):
    ``None`` for a field this tile does not use (one core matrix along that direction, or LBO of a
    swizzled K-major tile). Whether the tile is canonical at all is :func:`reads_tile`'s question.

    >>> off = np.arange(16 * 64).reshape(16, 64) * 2  # 16 rows of 128 bytes, K-major
    >>> derive(off, "128B", "K", 16)
    {'lbo': None, 'sbo': 1024}
    """
    m, eb = tma_mode(mode_name), elem_bits // 8
    t = 16 // eb  # elements per 16-byte unit
    w = WIDTH[m.name]
    mn, k = offsets.shape

    def at(i: int, j: int) -> int | None:
        return int(offsets[i, j] - offsets[0, 0]) if i < mn and j < k else None

    if major == "K":
        return {"lbo": at(0, t) if w == 1 else None, "sbo": at(8, 0)}
    if w == 1:
        return {"lbo": at(0, 8), "sbo": at(t, 0)}
    return {"lbo": at(w * t, 0), "sbo": at(0, 8)}


def reads_tile(d: Descriptor, offsets: np.ndarray, major: str, elem_bits: int, base: int = 0) -> bool:
    """Whether descriptor ``d`` (start relative to ``base``) reads element ``(mn, k)`` of the tile
    at ``base + swizzle(offsets[mn, k])`` for every element, one 32-byte K step at a time, each
    step's start moved to the step's first element as CUTLASS's descriptor iterator moves it. The
    operand rules (:func:`~bankproof.models.engines.placement.check_major`) are not applied."""
    mn, k = offsets.shape
    kk = min(k, 256 // elem_bits)
    want = np.asarray(swizzled(d.swizzle.sw, base + offsets))
    rows, cols = np.meshgrid(np.arange(mn), np.arange(kk), indexing="ij")
    for s in range(max(1, k // kk)):
        start = base + d.start + int(offsets[0, s * kk] - offsets[0, 0])
        got = read_address(d, major, elem_bits, rows, cols, start)
        if not (np.asarray(got) == want[:, s * kk : (s + 1) * kk]).all():
            return False
    return True


__all__ = ["derive", "pair", "reads_tile", "tma_tile"]
