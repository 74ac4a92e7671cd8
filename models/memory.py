"""Memory layouts that are not linear: padded shared memory.

``PaddedLayout`` pairs a linear component (unpadded offset -> tensor coordinates) with padding:
after every ``interval`` elements, ``pad`` unused elements are inserted (Triton's
``padded_shared``). The physical element offset of unpadded offset ``x`` is
``x + sum_k (x // interval_k) * pad_k``.

>>> from models.layout import LinearLayout
>>> P = PaddedLayout(LinearLayout.identity1d(64, "offset", "dim0"), ((32, 4),))
>>> P.physical_offsets()[[0, 31, 32, 63]].tolist()
[0, 31, 36, 67]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.layout import LinearLayout


@dataclass(frozen=True)
class PaddedLayout:
    """A linear component plus ``(interval, pad)`` pairs, all in elements."""

    linear: LinearLayout
    intervals: tuple[tuple[int, int], ...]

    def physical_offsets(self) -> np.ndarray:
        """Physical element offset of every unpadded offset ``0 .. 2**bits - 1``."""
        x = np.arange(1 << len(self.linear.in_bases("offset")), dtype=np.int64)
        out = x.copy()
        for interval, pad in self.intervals:
            out += (x // interval) * pad
        return out

    def span(self) -> int:
        """Elements of shared memory the buffer occupies, padding included."""
        return int(self.physical_offsets()[-1]) + 1
