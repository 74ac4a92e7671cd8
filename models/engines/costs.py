"""What Nsight Compute counts for the engines (measured on an H100 and an H200, ncu 2025.3.1,
``gpu_checks/results/*-engines.json.gz``).

- A wgmma reads each operand it takes from shared memory through a descriptor as ``bytes / 128``
  ``op_gmma`` wavefronts (``rows x 32`` bytes per K step), with no ``op_gmma`` bank conflicts, for
  every layout type (none, 32B, 64B, 128B), 8/16/32-bit, K- and MN-major, A and B, starts on and
  off the swizzle period, any base-offset field and arbitrary LBO/SBO (72 random descriptors): even
  a descriptor that reads the wrong bytes costs the ideal.
- A TMA load writes shared memory outside every LSU shared-memory wavefront metric (``op_ld``,
  ``op_st``, ``op_gmma``, their total and bank conflicts do not change with the box); ncu counts its
  global side: ``l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld`` is the 32-byte sectors each
  box row touches, and ``..._read_bytes_...`` is 32 bytes per sector.

>>> gmma_wavefronts(64, 16), gmma_wavefronts(32, 8)
(16, 8)
>>> tma_global_sectors(16, 128, 16)  # 16 rows of 128 bytes starting 16 bytes into a sector
80
"""

from __future__ import annotations

from bankproof.models.errors import InputError


def gmma_wavefronts(rows: int, elem_bits: int, k_bytes: int = 32) -> int:
    """``op_gmma`` wavefronts of one operand read through a descriptor: its bytes over 128.
    ``elem_bits`` is named for the caller's clarity: a K step is 32 bytes whatever the type."""
    if rows % 8 or rows <= 0 or elem_bits not in (8, 16, 32):
        raise InputError(
            "gmma", "operand", "needs rows a multiple of 8 and 8/16/32-bit elements", (rows, elem_bits)
        )
    return rows * k_bytes // 128


def tma_global_sectors(rows: int, row_bytes: int, offset: int, pitch: int = 0) -> int:
    """32-byte global sectors a TMA box of ``rows`` rows of ``row_bytes`` bytes reads, its first row
    starting ``offset`` bytes into memory, rows ``pitch`` bytes apart (a multiple of 32 when 0)."""
    total = 0
    for r in range(rows):
        start = offset + r * pitch
        total += (start % 32 + row_bytes + 31) // 32
    return total


__all__ = ["gmma_wavefronts", "tma_global_sectors"]
