"""The writer's register layout is a choice too: for a global -> shared copy (``cp.async``), the
writers that move the same 128-byte global lines per warp instruction (equally coalesced), and
the cheapest of them on a given shared layout.

The family: the warp's data along the tensor's contiguous (last) dimension, W (the bits of that
dimension its lanes and registers hold; every lane must sit there), is kept; the lanes become any
5-dimensional subspace of W whose projection on the line bits (the bits above one 128-byte line)
has the rank the compiler's lanes have (the same number of lines per instruction); the
registers complete W lowest bit first and keep their other bits; warps are unchanged. Each
writer is costed with the copy widths the op allows. Searched exhaustively when W has at most
``MAX_W`` bits.

>>> from bankproof.models.layout import LinearLayout
>>> mem = LinearLayout.from_bases({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]},
...                               {"dim0": 2, "dim1": 32})
>>> lay = LinearLayout.from_bases({"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8],
...                                [0, 16]]}, {"dim0": 2, "dim1": 32})
>>> best = cheapest_writer(lay, mem, 32, ["st32"])
>>> best.wavefronts, best.searched
(2, 1)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from bankproof.models import f2
from bankproof.models.layout import LinearLayout
from bankproof.verifier.engine.costs import best_cost

MAX_W = 8
LINE_BYTES = 128


@dataclass(frozen=True)
class Writer:
    wavefronts: int
    instr: str
    layout: LinearLayout
    searched: int  # writers costed


def subspaces(n: int, k: int):
    """Every k-dimensional subspace of F2^n, once each, as a basis (reduced echelon rows).

    >>> sum(1 for _ in subspaces(3, 2))
    7
    """
    for pivots in itertools.combinations(range(n), k):
        pivot_set = set(pivots)
        free = [[c for c in range(p) if c not in pivot_set] for p in pivots]
        for bits in itertools.product(*[range(1 << len(f)) for f in free]):
            rows = []
            for p, cols, b in zip(pivots, free, bits):
                v = 1 << p
                for j, c in enumerate(cols):
                    if (b >> j) & 1:
                        v |= 1 << c
                rows.append(v)
            yield rows


def cheapest_writer(dist: LinearLayout, memory, elem_bits: int, options: list[str]) -> Writer | None:
    """The cheapest equally coalesced writer of ``dist``'s data on ``memory`` (None when the
    family does not apply: lanes off the contiguous dimension, or W too wide)."""
    names = [n for n, _ in dist.out_dims]
    last = len(names) - 1

    def on_last(x: tuple[int, ...]) -> bool:  # a basis along the contiguous dimension only
        return any(x) and not any(x[:last])

    lanes = dist.in_bases("lane")
    if len(lanes) != 5 or not all(on_last(x) for x in lanes):
        return None
    regs = dist.in_bases("register")
    along = [r[last] for r in regs if on_last(r)]
    w_bits = sorted(
        {b for x in [x[last] for x in lanes] + along for b in range(x.bit_length()) if x >> b & 1}
    )
    if len(w_bits) > MAX_W or f2.rank([x[last] for x in lanes] + along) != len(w_bits):
        return None
    n = len(w_bits)
    line = max(0, (LINE_BYTES * 8 // elem_bits).bit_length() - 1)  # bits inside one line

    def to_tensor(v: int) -> int:  # a vector of W as a coordinate of the contiguous dimension
        return sum(1 << w_bits[i] for i in range(n) if v >> i & 1)

    def point(v: int) -> tuple[int, ...]:
        return (0,) * last + (to_tensor(v),)

    def lines_rank(vs: list[int]) -> int:
        return f2.rank([x >> line for x in vs])

    target = lines_rank([x[last] for x in lanes])
    others = tuple(r for r in regs if not on_last(r))
    best: tuple[int, str, LinearLayout] | None = None
    searched = 0
    for basis in subspaces(n, 5):
        lane_vecs = sorted(basis)
        if lines_rank([to_tensor(v) for v in lane_vecs]) != target:
            continue
        writer = LinearLayout(
            (
                ("register", tuple(point(v) for v in f2.complement(basis, n)) + others),
                ("lane", tuple(point(v) for v in lane_vecs)),
                ("warp", dist.in_bases("warp")),
                ("block", dist.in_bases("block")),
            ),
            dist.out_dims,
        )
        cost = best_cost(writer, "store", memory, elem_bits, options)
        searched += 1
        if cost is not None and (best is None or cost[0] < best[0]):
            best = (cost[0], cost[2], writer)
    return None if best is None else Writer(*best, searched)
