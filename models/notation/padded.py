"""Padded memory layouts printed back: Triton's ``padded_shared`` and a strided CuTe layout.

A :class:`~bankproof.models.memory.PaddedLayout` read from any notation is printed in every
notation that can say it exactly: Triton's ``#ttg.padded_shared`` with explicit ``offset`` bases
(when every padding is a power of two and each basis moves in one dim, as Triton 3.9.0 requires:
"Each offset basis must move in at most one dimension") and CuTe's ``(shape):(stride)`` (when
each element's offset is the sum of its coordinate bits' offsets, so strides say it). Each form is
checked element by element against the layout before it is offered.

>>> from bankproof.models.notation import parse_layout
>>> sorted(padded_notations(parse_layout("(32,128):(132,1)").layout).items())[0]
('cute', '(32,128):(132,1)')
"""

from __future__ import annotations

import numpy as np
from bankproof.models.access import element_offsets
from bankproof.models.errors import is_pow2
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation.triton_fields import fmt_value


def padded_notations(layout: PaddedLayout) -> dict[str, str]:
    """Every notation that expresses ``layout`` exactly, by name (``triton``, ``cute``)."""
    out: dict[str, str] = {}
    lin = layout.linear
    one_dim = all(sum(1 for c in b if c) <= 1 for b in lin.in_bases("offset"))
    if one_dim and all(is_pow2(p) for _, p in layout.intervals) and not lin.in_bases("block"):
        iv = ", ".join(f"{i}:+{p}" for i, p in layout.intervals)
        offset = fmt_value([list(b) for b in lin.in_bases("offset")])
        out["triton"] = f"#ttg.padded_shared<[{iv}] {{offset = {offset}, block = []}}>"
    cute = strided_cute(layout)
    if cute is not None:
        out["cute"] = cute
    return out


def strided_cute(layout: PaddedLayout) -> str | None:
    """``(shape):(stride)`` giving every element of ``layout`` its offset, or None when no strides
    do (the offsets are not additive over the coordinate bits).

    >>> from bankproof.models.notation import parse_layout
    >>> strided_cute(parse_layout("((8,4),64):((64,520),1)").layout)
    '((8,4),64):((64,520),1)'
    """
    offsets = element_offsets(layout)
    shape = offsets.shape
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in shape], indexing="ij")
    total = np.zeros(shape, dtype=np.int64)
    modes: list[tuple[list[int], list[int]]] = []
    for d, size in enumerate(shape):
        sizes: list[int] = []
        strides: list[int] = []
        for b in range(size.bit_length() - 1):
            idx = [0] * len(shape)
            idx[d] = 1 << b
            image = int(offsets[tuple(idx)])
            total += ((grids[d] >> b) & 1) * image
            if strides and image == strides[-1] * sizes[-1]:
                sizes[-1] *= 2
            else:
                sizes.append(2)
                strides.append(image)
        modes.append((sizes or [1], strides or [0]))
    if not np.array_equal(total, offsets):
        return None

    def one(values: list[int]) -> str:
        return str(values[0]) if len(values) == 1 else f"({','.join(map(str, values))})"

    return f"({','.join(one(s) for s, _ in modes)}):({','.join(one(t) for _, t in modes)})"
