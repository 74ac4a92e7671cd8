"""Do a writer and a reader agree on the bytes? The enumeration engine: every element the reader
reads (its coordinates in the writer's tile) must be at the address the writer wrote it to, for the
tile's base address; otherwise the first mismatching element in row-major order, both addresses,
and the smallest base alignment at which they agree.

The placements' dependence on the base repeats every ``P`` bytes (:func:`~bankproof.models.engines.
placement.period`: every swizzle reads only address bits below its top bit, so ``f(b + P) = f(b) +
P``): checking the bases ``0, A, 2A, ... < P`` decides agreement for every base aligned to ``A``.

>>> from bankproof.models.engines.placement import TmaBox, LayoutPlacement
>>> from bankproof.models.engines.tma import MODES
>>> from bankproof.models.notation.cute_values import Swizzle
>>> import numpy as np
>>> box = TmaBox(MODES["128B"], 8, 64, 16)
>>> rel = LayoutPlacement(np.arange(8 * 64).reshape(8, 64), 16, Swizzle(3, 4, 3), "relative")
>>> check(box, rel, 0).agree, check(box, rel, 128).first
(True, Mismatch(row=0, col=0, writer=144, reader=128, written=True))
>>> smallest_alignment(box, rel)
1024
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.engines.placement import Placement, period


@dataclass(frozen=True)
class Mismatch:
    """An element the reader reads from another address than the writer wrote it to (``written``
    false: the writer's tile does not hold it)."""

    row: int
    col: int
    writer: int | None
    reader: int
    written: bool = True


@dataclass(frozen=True)
class Enumerated:
    agree: bool
    checked: int  # elements the reader reads
    mismatches: int
    first: Mismatch | None


def check(writer: Placement, reader: Placement, base: int,
          region: tuple[tuple[int, int], tuple[int, int]] | None = None) -> Enumerated:  # fmt: skip
    """Agreement at one base: the reader's address of each element against the writer's, over the
    reader's elements (or ``region``: ``(origin, shape)`` of some of them)."""
    (r0, c0), (nr, nc) = region or (reader.origin, reader.shape)
    rows, cols = np.meshgrid(np.arange(r0, r0 + nr), np.arange(c0, c0 + nc), indexing="ij")
    (w0, x0), (wn, xn) = writer.origin, writer.shape
    inside = (rows >= w0) & (rows < w0 + wn) & (cols >= x0) & (cols < x0 + xn)
    wa = np.asarray(writer.address(np.clip(rows, w0, w0 + wn - 1), np.clip(cols, x0, x0 + xn - 1), base))
    ra = np.asarray(reader.address(rows, cols, base))
    bad = ~inside | (wa != ra)
    n = int(bad.sum())
    first = None
    if n:
        i, j = np.argwhere(bad)[0]
        written = bool(inside[i, j])
        first = Mismatch(
            int(rows[i, j]), int(cols[i, j]), int(wa[i, j]) if written else None, int(ra[i, j]), written
        )
    return Enumerated(n == 0, int(bad.size), n, first)


def agreeing_bases(writer: Placement, reader: Placement) -> tuple[int, int, tuple[int, ...]]:
    """``(P, step, residues)``: the bases ``b`` in ``0, step, 2 step, ... < P`` (``step`` the
    alignment both placements need, at least 16) at which they agree; by the period, agreement at
    any base is agreement at its residue modulo ``P``."""
    p = period(writer, reader)
    step = max(16, writer.alignment, reader.alignment)
    return p, step, tuple(b for b in range(0, p, step) if check(writer, reader, b).agree)


def alignment(p: int, step: int, offsets: tuple[int, ...]) -> int | None:
    """The smallest power of two ``A >= step`` whose every multiple below ``p`` is in ``offsets``."""
    good, a = set(offsets), step
    while a <= p:
        if all(b in good for b in range(0, p, a)):
            return a
        a *= 2
    return None


def smallest_alignment(writer: Placement, reader: Placement) -> int | None:
    """The smallest power of two ``A`` (at least what both placements need) such that they agree at
    every base aligned to ``A``; ``None`` when base 0 (so every alignment) disagrees."""
    return alignment(*agreeing_bases(writer, reader))


__all__ = ["Enumerated", "Mismatch", "agreeing_bases", "alignment", "check", "smallest_alignment"]
