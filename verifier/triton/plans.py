"""The layout search the scan's optima rest on: the cheapest (memory layout, instructions) pair
for a writer and a reader over the §5.4 candidates, the plain layouts and each side's own order,
every access costed with the instructions its op could use.

>>> [lay.as_dict()["offset"] for lay in trivial_layouts((("m", 2), ("n", 2)))]
[[[0, 1], [1, 0]], [[1, 0], [0, 1]]]
"""

from __future__ import annotations

from itertools import chain

from bankproof.models import f2
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space
from bankproof.verifier.engine.choice import candidates
from bankproof.verifier.engine.costs import access_bound, best_cost, matrix_options


def legal_instructions(op: str, kind: str, bits: int, sm: int) -> list[str]:
    """The instructions an op could use in another layout: ``cp.async`` copies 4, 8 or 16 bytes;
    a register store any ``st`` vector or, 16-bit on sm90+, ``stmatrix``; a load any ``ld`` vector
    or, 16-bit, ``ldmatrix``."""
    if op == "ttg.async_copy_global_to_local":
        return [f"st{w}" for w in (128, 64, 32) if w >= bits]
    return ["auto", *matrix_options(kind, bits, sm >= 90)]


def cheapest_plan(
    accesses: list[tuple], wd: LinearLayout, rd: LinearLayout, bits: int, sm: int
) -> tuple | None:
    """The cheapest (total wavefronts, memory layout, instructions) for ``accesses`` ((op, kind,
    distributed layout, element bits) each, every one costed with the instructions its op could
    use) over the searched candidates for writer ``wd`` and reader ``rd`` and the plain layouts."""
    wd, rd = whole_buffer(wd), whole_buffer(rd)
    # The same layouts in the same order as a full search, built lazily: a later layout must be
    # strictly cheaper to win, so the search may stop once the best meets the bytes/128 bound
    # (no layout goes below it) and may skip a layout it has already costed.
    layouts = chain(
        (c.layout for _, c in candidates(wd, rd, bits)),
        trivial_layouts(wd.out_dims),  # never above a plain layout either
        (preferred_layout(wd), preferred_layout(rd)),  # nor a side's own order
    )
    bound = sum(access_bound(dist, b) for _, _, dist, b in accesses)
    best, seen = None, set()
    for memory in layouts:
        if memory in seen:
            continue
        seen.add(memory)
        total, instrs = 0, []
        for op, kind, dist, b in accesses:
            cost = best_cost(dist, kind, memory, b, legal_instructions(op, kind, b, sm))
            if cost is None:
                break
            total += cost[0]
            instrs.append(cost[2])
        else:
            if best is None or total < best[0]:
                best = (total, memory, instrs)
            if best[0] <= bound:
                break
    return best


def trivial_layouts(out_dims) -> list[LinearLayout]:
    """Row-major (last dim fastest) and column-major (first dim fastest) unswizzled layouts.

    >>> [lay.as_dict()["offset"] for lay in trivial_layouts((("m", 2), ("n", 4)))]
    [[[0, 1], [0, 2], [1, 0]], [[1, 0], [0, 1], [0, 2]]]
    """
    dims = list(out_dims)
    out = []
    for order in (reversed(range(len(dims))), range(len(dims))):
        cols = []
        for d in order:
            for k in range(dims[d][1].bit_length() - 1):
                cols.append([1 << k if i == d else 0 for i in range(len(dims))])
        out.append(LinearLayout.from_bases({"offset": cols}, dict(dims)))
    return out


def preferred_layout(dist: LinearLayout) -> LinearLayout:
    """One side's own order as the memory layout: its register, lane and warp bases (the
    independent ones, in that order) at offset bits 0.., then the tensor bits it does not reach
    (row-major): that side's access walks memory in its own order.

    >>> lay = LinearLayout.from_bases({"register": [[1, 0]], "lane": [[0, 1], [0, 0]]}, {"m": 2, "n": 4})
    >>> preferred_layout(lay).as_dict()["offset"]
    [[1, 0], [0, 1], [0, 2]]
    """
    space = Space.of(dist)
    cols: list[int] = []
    units = [1 << k for k in range(space.bits)]  # row-major: the last dim's bits first
    own = [space.pack_row_major(b) for d in ("register", "lane", "warp") for b in dist.in_bases(d)]
    for v in own + units:
        if v and not f2.in_span(v, cols):
            cols.append(v)
    return LinearLayout.from_bases({"offset": [list(space.unpack_row_major(v)) for v in cols]},
                                   dict(dist.out_dims))  # fmt: skip


def whole_buffer(dist: LinearLayout) -> LinearLayout:
    """A subslice view's layout (placed at the buffer's origin) extended to the whole buffer: the
    tensor bits the view does not reach become register bits, i.e. the same warps read the other
    subslices, each a shifted copy of the first. A layout that already covers the buffer is
    returned as it is.

    >>> view = LinearLayout.from_bases({"register": [[0, 1]], "lane": [[1, 0]]}, {"m": 2, "k": 4})
    >>> whole_buffer(view).as_dict()["register"]
    [[0, 1], [0, 2]]
    """
    if dist.is_surjective():
        return dist
    image = [c for c in dist.columns if c]
    missing: list[int] = []
    for bit in range(dist.out_bits):
        if not f2.in_span(1 << bit, image + missing):
            missing.append(1 << bit)
    bases = dist.as_dict()
    bases["register"] = bases.get("register", []) + [list(dist.unpack_dim0_lowest(v)) for v in missing]
    return LinearLayout.from_bases(bases, dict(dist.out_dims))
