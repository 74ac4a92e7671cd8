"""Warp-level data movement of the Triton wing's PTX evaluator: ``shfl.sync`` across a warp.

>>> import numpy as np
>>> shuffle(["shfl", "sync", "bfly", "b32"], np.arange(32), np.full(32, 1), np.full(32, 31))[:4].tolist()
[1, 0, 3, 2]
"""

from __future__ import annotations

import numpy as np


def shuffle(parts: list[str], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """``shfl.sync.MODE``: each thread reads ``a`` from a source lane of its own warp (whole-warp
    segments only: ``c`` = 31 for idx/bfly/down, 0 for up; out-of-range sources read their own)."""
    t = np.arange(a.shape[0])
    lane, base = t % 32, t - t % 32
    b = np.asarray(b) & 31  # the lane or delta operand's low 5 bits (measured)
    mode = parts[2] if len(parts) > 2 else ""
    if mode == "idx" and np.all(c == 31):
        src = b & 31
    elif mode == "bfly" and np.all(c == 31):
        src = lane ^ (b & 31)
    elif mode == "down" and np.all(c == 31):
        src = np.where(lane + b <= 31, lane + b, lane)
    elif mode == "up" and np.all(c == 0):
        src = np.where(lane - b >= 0, lane - b, lane)
    else:
        return None
    idx = np.minimum(base + src, a.shape[0] - 1)
    return a[idx]
