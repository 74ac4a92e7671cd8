"""The paper's algebra (§5.4, appendix §9.2): the optimal swizzle for a writer A and a reader B,
Lemma 9.4's wavefront count and Lemma 9.5's bound, each step recorded so it can be explained.

Vectors are tensor coordinates packed into ints in row-major bit order: the last dim's bits are
the lowest (``n0 .. n4`` before ``m0 .. m3`` for a ``[16, 32]`` tensor), the order the seeds use.

Every XOR swizzle the project names (CuTe's ``Swizzle<B,M,S>``, TMA's and the descriptors' modes in
:mod:`bankproof.models.engines.tma`, a kernel fix in :mod:`bankproof.verifier.kernel.fixes`, the
workbench's toggles) is this one map, :data:`SWIZZLE_DIAGRAM`, on an offset ``x`` in its units
(elements, or bytes for the engines and the fixes)::

    bit       ...  M+S+B-1 .. M+S  ...  M+B-1 .. M   M-1 .. 0
    x         ...  [    Y     ]    ...  [   Z    ]   [ kept ]
    result    ...  [    Y     ]    ...  [ Z ^ Y  ]   [ kept ]

    Swizzle<B,M,S>(x) = x ^ ((x >> S) & (((1 << B) - 1) << M))

``M`` low bits stay (a ``2^M``-unit chunk moves whole), ``B`` bits are flipped, by the ``B`` bits
``S`` above them; its period is ``2^(M+S+B)`` units. TMA's 32B, 64B and 128B modes are
``Swizzle<1,4,3>``, ``<2,4,3>`` and ``<3,4,3>`` on byte addresses; a workbench toggle (segment bit
``i`` into bank bit ``j``) adds one term of the same XOR.

>>> from bankproof.models.notation import parse_layout
>>> A = parse_layout('{"register": [[1,0],[2,0],[4,0],[8,0]], '
...                  '"lane": [[0,1],[0,2],[0,4],[0,8],[0,16]]}', [16, 32])
>>> B = parse_layout('{"register": [[0,2],[0,4],[0,8],[0,16]], '
...                  '"lane": [[1,0],[2,0],[4,0],[8,0],[0,1]]}', [16, 32])
>>> s = optimal_swizzle(A.layout, B.layout, elem_bits=32)
>>> s.layout.as_dict()["offset"][5:]
[[1, 2], [2, 4], [4, 8], [8, 16]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bankproof.models import f2
from bankproof.models.errors import InputError, log2
from bankproof.models.hardware import vector_limit
from bankproof.models.layout import LinearLayout
from bankproof.models.lemmas import LANE_BITS, ROW_BYTES, conflict_dim, meet_space, thread_set_pairs
from bankproof.models.space import Space

SWIZZLE_DIAGRAM = __doc__.split("::", 1)[1].split("``M`` low bits", 1)[0].strip("\n")  # the picture above


def cute_swizzle(x: int, b: int, m: int, s: int) -> int:
    """``Swizzle<B,M,S>`` on ``x`` (see :data:`SWIZZLE_DIAGRAM`).

    >>> cute_swizzle(0b0001_0000000, 3, 4, 3), cute_swizzle(0b0001_0010000, 3, 4, 3)
    (144, 128)
    """
    return x ^ ((x >> s) & (((1 << b) - 1) << m))


@dataclass(frozen=True, kw_only=True)
class Construction:
    """The result of the §5.4 construction, with every intermediate set (packed vectors).

    ``layout`` is the memory layout ``offset -> dims``: offset bits are ``vec`` then ``bank``
    then ``idx`` (segment) columns."""

    space: Space
    elem_bits: int
    vec: list[int]
    bank: list[int]
    idx: list[int]
    b: int
    ell: int
    a_thr: list[int]
    b_thr: list[int]
    a_bank: list[int]
    b_bank: list[int]
    split_a: list[int]
    split_b: list[int]
    phases_a: int
    phases_b: int
    inter: list[int]
    e: list[int]
    f: list[int]
    h: list[int]
    c: list[int]
    padding: list[int]
    sub: list[int]
    layout: LinearLayout
    a_conflict_dim: int
    b_conflict_dim: int
    notes: list[str] = field(default_factory=list)

    @property
    def conflict_free(self) -> bool:
        return self.a_conflict_dim == 0 and self.b_conflict_dim == 0


@functools.lru_cache(maxsize=256)
def packed_bases(layout: LinearLayout, dims: tuple[tuple[str, int], ...]) -> dict[str, tuple[int, ...]]:
    """The register, lane and warp bases of ``layout`` as packed row-major tensor vectors of the
    tensor ``dims`` (out dims in that order). Read-only, kept for the last layouts.

    >>> lay = LinearLayout.from_bases({"register": [[1, 0]], "lane": [[0, 1]]}, {"a": 2, "b": 2})
    >>> packed_bases(lay, (("a", 2), ("b", 2)))["register"]
    (2,)
    """
    dist = layout.transpose_outs([n for n, _ in dims])
    space = Space.of(dist)
    return {d: tuple(space.pack_row_major(b) for b in dist.in_bases(d)) for d in ("register", "lane", "warp")}


def vectorization(a: LinearLayout, b: LinearLayout, space: Space, elem_bits: int) -> list[int]:
    """V: register vectors both layouts hold (A's register order), at most 128 bits per lane."""
    a_reg = [space.pack_row_major(x) for x in a.in_bases("register") if any(x)]
    b_reg = {space.pack_row_major(x) for x in b.in_bases("register") if any(x)}
    limit = vector_limit(elem_bits)
    out: list[int] = []
    for v in a_reg:
        if v in b_reg and len(out) < limit:
            out.append(v)
    return out


def optimal_swizzle(
    a: LinearLayout,
    b: LinearLayout,
    elem_bits: int,
    kind_a: str = "store",
    kind_b: str = "load",
    dim_names: Sequence[str] | None = None,
    vec: Sequence[int] | None = None,
    phase_rows: tuple[Sequence[int] | None, Sequence[int] | None] = (None, None),
    widths: tuple[int | None, int | None] = (None, None),
    groups: LaneGroups | None = None,
) -> Construction:
    """§5.4 for writer ``a`` and reader ``b`` (distributed layouts onto the same tensor).
    ``vec`` overrides the vector (packed tensor bits for offset bits 0..): by default the
    register bits both hold; a caller searching instruction choices passes others.
    ``phase_rows`` (writer's, reader's) replaces a side's in-phase lane vectors by the tensor
    bits its 8 row addresses differ in, for an ldmatrix/stmatrix side. ``widths`` (writer's,
    reader's; log2 elements) says a side moves fewer than ``vec``'s elements per lane (its own
    registers hold only that prefix): its phases follow its own width, and its lanes at the
    vector's other bits already land in distinct banks of the row. ``groups``: a lane-group target
    (LDS): its warp size, banks, and each instruction's lane-0 group (lane indices), in place
    of the measured 32-lane phases."""
    if sorted(a.out_dims) != sorted(b.out_dims):
        raise InputError(
            "synth", "layouts", f"cover different tensors: {dict(a.out_dims)} vs {dict(b.out_dims)}"
        )
    lane_bits = LANE_BITS if groups is None else groups.warp.bit_length() - 1
    for name, lay in (("writer", a), ("reader", b)):
        if len(lay.in_bases("lane")) != lane_bits:
            raise InputError(
                "synth",
                f"{name} layout.lane",
                f"must have {lane_bits} bases ({1 << lane_bits} lanes)",
                len(lay.in_bases("lane")),
            )
    if elem_bits not in (8, 16, 32, 64):
        raise InputError("synth", "dtype", "must be 8, 16, 32 or 64 bits wide", elem_bits)
    b = b.transpose_outs(a.out_dim_names)
    space = Space.of(a, dim_names)
    d = space.bits
    w = elem_bits // 8
    notes = []
    vec = list(vec) if vec is not None else vectorization(a, b, space, elem_bits)
    v = len(vec)
    vec_bytes = (1 << v) * w
    row_bytes = ROW_BYTES if groups is None else groups.banks * 4
    nb = min(d - v, log2(max(1, row_bytes // vec_bytes)))
    ell = d - v - nb
    side_bytes = [vec_bytes if x is None else (1 << x) * w for x in widths]
    sets = thread_set_pairs if groups is None else groups.thread_sets
    a_thr, a_bank, split_a, phases_a = sets(a, space, side_bytes[0], kind_a)
    b_thr, b_bank, split_b, phases_b = sets(b, space, side_bytes[1], kind_b)
    if phase_rows[0] is not None:
        a_bank = [x for x in phase_rows[0] if x]
    if phase_rows[1] is not None:
        b_bank = [x for x in phase_rows[1] if x]
    # Lanes (or ldmatrix rows) that differ only in vector bits share a word (a row): the
    # construction works in the quotient by span(vec), each vector reduced to its representative
    # off the vector's leading bits (a linear projection, so the sets stay subspaces there).
    word = f2.echelon(vec)

    def mod_vec(xs: list[int]) -> list[int]:
        out: list[int] = []
        for y in (f2.reduce(x, word) for x in xs):
            if y and y not in out:
                out.append(y)
        return out

    a_thr, a_bank, split_a = mod_vec(a_thr), mod_vec(a_bank), mod_vec(split_a)
    b_thr, b_bank, split_b = mod_vec(b_thr), mod_vec(b_bank), mod_vec(split_b)
    if vec_bytes < 4:
        notes.append(f"each lane moves {vec_bytes} bytes, less than a bank: Lemma 9.4's count need not hold")
    # I, E, F as subspaces (the paper's sets): I a basis of span(A_Bank) ∩ span(B_Bank), E and F
    # the writer's and reader's vectors completing it. Taken as literal sets of lane vectors, a
    # vector of one side in the other's span but not among its bases (lane (2,2) beside (2,0)
    # and (0,2)) would land in E or F, and H = E ⊕ F would then meet a side's span: a conflict
    # no layout needs.
    inter = sorted(f2.intersection(a_bank, b_bank))
    a_rest, b_rest = _completing(inter, a_bank), _completing(inter, b_bank)
    # Narrow accesses (< 4 bytes per lane): the lowest bank bits select bytes within one 4-byte
    # word; lanes that differ only there share the word (broadcast, no conflict). Give those
    # bits thread vectors both accesses have (I), then the side with more thread vectors.
    n_sub = max(0, log2(4 // vec_bytes)) if vec_bytes < 4 else 0
    n_sub = min(n_sub, nb)
    sub: list[int] = []
    a_left, b_left = list(a_rest), list(b_rest)
    for x in inter:
        if len(sub) < n_sub:
            sub.append(x)
    while len(sub) < n_sub and (a_left or b_left):
        side = a_left if len(a_left) >= len(b_left) else b_left
        sub.append(side.pop(0))
    e = [x for x in a_rest if x not in sub]
    f = [x for x in b_rest if x not in sub]
    e_sorted, f_sorted = sorted(e), sorted(f)
    c = f2.complement(vec + sub + a_bank + b_bank, d)
    h, idx, padding = segment_basis(e_sorted, f_sorted, [x for x in inter if x not in sub], c, ell, vec + sub)
    used = vec + sub + idx
    bank: list[int] = list(sub)
    basis = f2.echelon(used)
    for i in range(d):
        x = 1 << i
        if len(bank) >= nb:
            break
        if f2.reduce(x, basis):
            bank.append(x)
            basis = f2.extend(basis, x)
    if vec:  # offset bits past the vector: moved along span(vec) to hold what must stay aligned
        sides = [(a, phase_rows[0], widths[0]), (b, phase_rows[1], widths[1])]
        sides.sort(key=lambda x: x[1] is None)  # a matrix side's rows first: it cannot do without
        want = [y for lay, rows, width in sides for y in _aligned(lay, space, rows, width, v)]
        lifted = _lift(vec, bank + idx, want)
        bank, idx = lifted[: len(bank)], lifted[len(bank) :]
    columns = vec + bank + idx
    if f2.rank(columns) != d or len(columns) != d:
        raise AssertionError("the construction must give an invertible layout")
    layout = LinearLayout.from_bases(
        {"offset": [space.unpack_row_major(x) for x in columns]}, dict(space.dims)
    )
    a_dim = conflict_dim(vec + sub, idx, a_bank)
    b_dim = conflict_dim(vec + sub, idx, b_bank)
    return Construction(
        space=space,
        elem_bits=elem_bits,
        vec=vec,
        bank=bank,
        idx=idx,
        b=nb,
        ell=ell,
        a_thr=a_thr,
        b_thr=b_thr,
        a_bank=a_bank,
        b_bank=b_bank,
        split_a=split_a,
        split_b=split_b,
        phases_a=phases_a,
        phases_b=phases_b,
        inter=inter,
        e=e_sorted,
        f=f_sorted,
        h=h,
        c=c,
        padding=padding,
        sub=sub,
        layout=layout,
        a_conflict_dim=a_dim,
        b_conflict_dim=b_dim,
        notes=notes,
    )


def _aligned(
    lay: LinearLayout, space: Space, rows: Sequence[int] | None, width: int | None, v: int
) -> list[int]:
    """Tensor vectors an access needs at offsets off the vector's bits: an ldmatrix/stmatrix side
    (``rows``) its rows, registers and warps (each 8-element row starts 16-byte aligned); an
    ld/st side of the whole vector its lanes and warps (each lane's vector aligned)."""
    packed = {d: [space.pack_row_major(x) for x in lay.in_bases(d) if any(x)] for d in lay.in_dim_names}
    warps = packed.get("warp", [])
    if rows is not None:
        return [*rows, *packed.get("register", []), *warps]
    if width is not None and width < v:
        return []  # a narrower side: its lanes need alignment only to its own width
    return [*packed.get("lane", []), *warps]


def _lift(vec: list[int], rest: list[int], want: list[int]) -> list[int]:
    """``rest`` (completing ``vec`` to a basis) moved along span(vec), which leaves every bank and
    segment unchanged, so that their span holds as many of ``want`` as are independent of the
    vector; unchanged when it already does.

    >>> _lift([1], [2], [3])  # offset bit 1 must be the tensor vector 3 for it to stay aligned
    [3]
    """
    keep = _completing(vec, want)
    if all(f2.in_span(x, rest) for x in keep):
        return rest
    u = keep + _completing(vec + keep, rest)  # a complement of span(vec) holding ``keep``
    out = []
    for c in rest:
        coeffs = f2.solve(vec + u, c)
        out.append(f2.apply(u, (coeffs or 0) >> len(vec)))
    return out


def _completing(basis: list[int], vectors: list[int]) -> list[int]:
    """The members of ``vectors`` that extend ``basis`` (in order) to a basis of their joint span.

    >>> _completing([0b011], [0b001, 0b010, 0b100])
    [1, 4]
    """
    echelon = f2.echelon(basis)
    out = []
    for x in vectors:
        if f2.reduce(x, echelon):
            out.append(x)
            echelon = f2.extend(echelon, x)
    return out


@dataclass(frozen=True)
class LaneGroups:
    """A lane-group target's shape for the construction: ``group(vec_bytes, kind)`` is lane 0's
    group (a basis of lane indices) and the number of groups of the instruction that moves
    ``vec_bytes`` per lane, or None when no grouping is published."""

    warp: int
    banks: int
    group: Callable[[int, str], tuple[list[int], int] | None]

    def thread_sets(self, layout: LinearLayout, space: Space, vec_bytes: int, kind: str):
        """:func:`thread_set_pairs` over lane groups: the lane vectors of lane 0's group share a
        phase; the rest split groups off. A side with no published grouping constrains nothing
        (the layout is built for the other; that side's count is unknown when verified)."""
        got = self.group(vec_bytes, kind)
        lanes = [space.pack_row_major(x) for x in layout.in_bases("lane")]
        if got is None:
            return [x for x in lanes if x], [], [x for x in lanes if x], 1
        basis, ngroups = got

        def image(index: int) -> int:
            out = 0
            for k, x in enumerate(lanes):
                if index >> k & 1:
                    out ^= x
            return out

        rest = f2.complement(basis, len(lanes))
        same = [image(i) for i in basis if image(i)]
        split = [image(i) for i in rest if image(i)]
        return [x for x in lanes if x], same, split, ngroups


def segment_basis(
    e: list[int], f: list[int], inter: list[int], c: list[int], ell: int, taken: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """S_Idx: ``ell`` vectors independent of ``taken``, preferring H = {e_i ⊕ f_i} then C
    (no conflicts on either side, Lemma 9.5). When those run short (conflicts unavoidable), pad
    with the larger side's unpaired vectors first (conflicts on that side only), then shared
    thread vectors, then halves of pairs (one conflict dimension on each side per vector), which
    meets both sides' lower bounds at once. Returns (H, S_Idx, padding).

    With warps of 32 lanes and the measured phases, in-phase lanes never outnumber bank bits, so
    padding is never needed for Def 4.10 layouts; the branch serves other lane counts.

    >>> segment_basis([1], [2, 4], [], [], 2, [])
    ([3], [3, 4], [4])
    """
    k = min(len(e), len(f))
    h = [e[i] ^ f[i] for i in range(k)]
    idx = (h + c)[:ell]
    padding: list[int] = []
    leftovers = e[k:] if len(e) > len(f) else f[k:]
    basis = f2.echelon(taken + idx)
    for x in leftovers + inter + e[:k] + f[:k]:
        if len(idx) + len(padding) >= ell:
            break
        if f2.reduce(x, basis):
            padding.append(x)
            basis = f2.extend(basis, x)
    return h, idx + padding, padding


def optimum_per_instruction(s: Construction) -> tuple[int, int]:
    """The fewest wavefronts per instruction a memory layout with the same vectorization (and,
    for narrow accesses, the same sub-word bits) can give the writer and the reader, by Lemma
    9.5's dimension count in the quotient by the word bits: ``phases * 2^max(0, ℓ - room)`` with
    ``room = d - v - |sub| - (|X_bank| - dim(X_bank ∩ span(vec ∪ sub)))``."""
    d, v, word = s.space.bits, len(s.vec), s.vec + s.sub

    def side(bank: list[int], phases: int) -> int:
        room = d - v - len(s.sub) - (f2.rank(bank) - meet_space(word, bank))
        return phases * (1 << max(0, s.ell - room))

    return side(s.a_bank, s.phases_a), side(s.b_bank, s.phases_b)
