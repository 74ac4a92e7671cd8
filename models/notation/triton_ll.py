"""Triton's layout-construction helpers, on :class:`LinearLayout`, with Triton's semantics.

These mirror the utilities Triton 3.9 uses to turn attributes into linear layouts (shape
fitting, CTA/CGA combination, standard dim names), so that every attribute gets exactly the
bases Triton gives it. Output dims are ``dim0, dim1, ...``; orders list the most minor dim first.

>>> L = identity_standard_nd("lane", [4, 8], [1, 0])
>>> L.out_dim_names, L.transpose_outs(["dim0", "dim1"]).in_bases("lane")
(['dim1', 'dim0'], ((0, 1), (0, 2), (0, 4), (1, 0), (2, 0)))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bankproof.models.layout import LinearLayout


def dims(rank: int) -> list[str]:
    """``["dim0", ..., "dim<rank-1>"]``."""
    return [f"dim{i}" for i in range(rank)]


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Identity ``in_dim -> dims`` sized by ``shape``, most minor dim (``order[0]``) first.
    The output dims keep ``order``'s order (Triton does not transpose them back).

    >>> identity_standard_nd("register", [2, 2], [0, 1]).in_bases("register")
    ((1, 0), (0, 1))
    """
    names = dims(len(shape))
    out = LinearLayout.empty()
    for d in order:
        out = out * LinearLayout.identity1d(shape[d], in_dim, names[d])
    return out


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """``[rank-1, ..., 0]``, with the two minor dims swapped when not row-major.

    >>> matrix_order(3, False)
    [1, 2, 0]
    """
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def order_for_dot_operand(op_idx: int, rank: int, k_contig: bool) -> list[int]:
    """Register order of a dot operand: K fastest when ``k_contig``.

    >>> order_for_dot_operand(1, 2, True)
    [0, 1]
    """
    return matrix_order(rank, row_major=(op_idx == 1) != k_contig)


def ensure_not_smaller(
    layout: LinearLayout, shape: Mapping[str, int], order: Sequence[str] | None = None
) -> LinearLayout:
    """Grow each output dim to ``shape`` by appending identity bits of the layout's first
    input dim (``register`` or ``offset``), dims visited in ``order`` (default: the layout's).

    >>> L = LinearLayout.identity1d(2, "register", "dim0")
    >>> ensure_not_smaller(L, {"dim0": 8}).in_bases("register")
    ((1,), (2,), (4,))
    """
    if not layout.bases:
        return layout
    k = layout.in_dim_names[0]
    out = layout
    for name in order or layout.out_dim_names:
        actual = layout.out_dim_size(name)
        want = shape[name]
        if want > actual:
            out = out * LinearLayout.identity1d(want // actual, k, name)
    return out


def ensure_not_larger(
    layout: LinearLayout, shape: Mapping[str, int], broadcast_registers: bool = True
) -> LinearLayout:
    """Shrink each output dim to ``shape`` by zeroing its largest images first (the data then
    repeats: broadcast). With ``broadcast_registers=False`` such register bits are dropped.

    >>> L = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4]]}, {"dim0": 8})
    >>> ensure_not_larger(L, {"dim0": 2}).as_dict()
    {'register': [[1], [0]], 'lane': [[0]]}
    """
    bases = {d: [list(b) for b in bs] for d, bs in layout.bases}
    dropped: set[int] = set()
    for k, name in enumerate(layout.out_dim_names):
        actual = layout.out_dim_size(name)
        want = shape[name]
        if actual <= want:
            continue
        found = [(d, i, b[k]) for d, bs in bases.items() for i, b in enumerate(bs) if b[k] != 0]
        found.sort(key=lambda t: -t[2])
        for d, i, _ in found:
            if actual <= want:
                break
            if not broadcast_registers and d == "register":
                dropped.add(i)
            else:
                bases[d][i][k] = 0
            actual >>= 1
    if dropped:
        bases["register"] = [b for i, b in enumerate(bases["register"]) if i not in dropped]
    return LinearLayout.from_bases(bases, layout.out_dim_names)


def cga_layout(cga: Sequence[Sequence[int]], rank: int) -> LinearLayout:
    """The ``block -> dims`` layout of a ``CGALayout = [[...], ...]`` list (empty: one CTA)."""
    if not cga:
        out = LinearLayout.empty()
        for name in dims(rank):
            out = out * LinearLayout.identity1d(1, "block", name)
        return out
    return LinearLayout.from_bases({"block": cga}, dims(rank))


def split_num(cga: Sequence[Sequence[int]], rank: int) -> list[int]:
    """How many pieces the CGA cuts each dim into (Triton's CTASplitNum)."""
    layout = cga_layout(cga, rank)
    return [layout.out_dim_size(n) for n in dims(rank)]


def shape_per_cta(shape: Sequence[int], cga: Sequence[Sequence[int]]) -> list[int]:
    return [max(1, s // n) for s, n in zip(shape, split_num(cga, len(shape)))]


def combine_cta_cga(
    cta: LinearLayout, cga: Sequence[Sequence[int]], shape: Sequence[int], drop_registers: bool = False
) -> LinearLayout:
    """Fit a one-CTA layout to ``shape`` (wrapping into registers/offsets, or broadcasting),
    then add the CGA's ``block`` dim; output dims end in standard order. With
    ``drop_registers``, register bits made redundant by a smaller shape are removed rather than
    zeroed (Triton does this for blocked layouts only)."""
    rank = len(shape)
    names = dims(rank)
    labeled = dict(zip(names, shape))
    blocks = ensure_not_larger(cga_layout(cga, rank), labeled).transpose_outs(cta.out_dim_names)
    cta_shape = {n: max(1, labeled[n] // blocks.out_dim_size(n)) for n in cta.out_dim_names}
    cta = ensure_not_smaller(cta, cta_shape)
    cta = ensure_not_larger(cta, cta_shape, broadcast_registers=not drop_registers)
    return (cta * blocks).transpose_outs(names)


def broadcasted_dot_operand(
    shape: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str
) -> LinearLayout:
    """Lanes or warps of a dot operand: identity on the non-K dims, zeros (broadcast) along K."""
    names = dims(len(shape))
    out = LinearLayout.empty()
    for d in order:
        if d == k_dim:
            out = out * LinearLayout.zeros1d(shape[d], in_dim, names[d])
        else:
            out = out * LinearLayout.identity1d(shape[d], in_dim, names[d])
    return out


def mma_tile(
    tile: Sequence[int], k_width: int, order: Sequence[int], rep_order: Sequence[int]
) -> LinearLayout:
    """The register/lane tile of ``nvidia_mma`` layouts (and their operands): kWidth registers
    and 4 lanes along the inner dim, 8 lanes along the outer dim, then register repeats (outer,
    then inner)."""
    rank = len(rep_order)
    names = dims(rank)
    out = identity_standard_nd("register", [1] * rank, rep_order)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    for size, in_dim, d in (
        (k_width, "register", inner),
        (4, "lane", inner),
        (8, "lane", outer),
        (m // 8, "register", outer),
        (n // (k_width * 4), "register", inner),
    ):
        out = out * LinearLayout.identity1d(size, in_dim, names[d])
    return out


def transpose_dims(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """New out dim ``i`` is old out dim ``order[i]``, renamed to standard names (Triton's
    ``transposeLinearLayout``)."""
    names = dims(len(order))
    old = layout.out_dim_names
    sizes = [layout.out_dim_size(old[i]) for i in order]
    bases = {d: [[b[i] for i in order] for b in bs] for d, bs in layout.bases}
    return LinearLayout.from_bases(bases, dict(zip(names, sizes)))


def remove_dim(layout: LinearLayout, dim: int) -> LinearLayout:
    """Drop standard out dim ``dim`` and renumber the rest (a slice's parent, §4 Prop 4.8)."""
    keep = [i for i in range(len(layout.out_dims)) if i != dim]
    names = dims(len(keep))
    sizes = [layout.out_dims[i][1] for i in keep]
    bases = {d: [[b[i] for i in keep] for b in bs] for d, bs in layout.bases}
    return LinearLayout.from_bases(bases, dict(zip(names, sizes)))
