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

from bankproof.models.engines.descriptors import Descriptor
from bankproof.models.engines.placement import DescriptorRead, TmaBox
from bankproof.models.engines.tma import mode as tma_mode
from bankproof.models.errors import InputError


def tma_tile(mode_name: str, elem_bits: int, major: str, mn: int, k: int) -> TmaBox:
    """The TMA boxes that write an ``mn x k`` operand tile."""
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


__all__ = ["pair", "tma_tile"]
