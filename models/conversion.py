"""Layout conversions A -> B: the §5.4 warp-shuffle plan for intra-warp conversions.

Vectors are tensor coordinates packed row-major (``models.swizzle.Space``). With V the shared
register vectors (at most 32 bits, one shuffle), I = A_Thr ∩ B_Thr, E = A_Thr ∖ I,
F = B_Thr ∖ I and G = {e_i ⊕ f_i}, every coset r ⊕ span(V ∪ I ∪ G) (r in span(R), R completing
the warp's space) holds exactly one vector per lane in A and in B, so one shuffle per round moves
it: lane t reads from the A-lane that holds B-lane t's element.

>>> from bankproof.models.notation import parse_layout
>>> A = parse_layout('{"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}', [128]).layout
>>> B = parse_layout('{"register": [[64], [2]], "lane": [[4], [8], [16], [32], [1]]}', [128]).layout
>>> p = shuffle_plan(A, B, 16)
>>> len(p.rounds), p.rounds[0].src[:4]
(2, [0, 1, 2, 3])
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models import f2
from bankproof.models.errors import InputError, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space


@dataclass(frozen=True)
class Round:
    """One shuffle round: lane ``t`` reads from lane ``src[t]``; lane ``s`` sends its vector at A
    register ``send[s]``; lane ``t`` stores what it receives at B register ``recv[t]``."""

    src: list[int]
    send: list[int]
    recv: list[int]


@dataclass(frozen=True)
class ShufflePlan:
    space: Space
    vec: list[int]
    inter: list[int]
    e: list[int]
    f: list[int]
    g: list[int]
    r: list[int]
    rounds: list[Round]
    elem_bits: int

    @property
    def shuffles_per_round(self) -> int:
        return max(1, ((1 << len(self.vec)) * self.elem_bits + 31) // 32)


def _unit_lists(lay: LinearLayout, sp: Space, dim: str) -> list[int]:
    return [sp.pack_row_major(b) for b in lay.in_bases(dim)]


def shuffle_plan(a: LinearLayout, b: LinearLayout, elem_bits: int, dim_names=None) -> ShufflePlan:
    """The §5.4 plan converting ``a`` to ``b`` within each warp (no broadcasting)."""
    b = b.transpose_outs(a.out_dim_names)
    sp = Space.of(a, dim_names)
    lane_bits = len(a.in_bases("lane"))
    for name, lay in (("source", a), ("destination", b)):
        if len(lay.in_bases("lane")) != lane_bits or lane_bits not in (5, 6):
            why = "must have 5 or 6 bases (a 32- or 64-lane warp), as the other has"
            raise InputError("convert", f"{name} layout.lane", why)
        if any(not any(x) for d in ("register", "lane", "warp") for x in lay.in_bases(d)):
            raise InputError("convert", f"{name} layout", "broadcasts (zero bases): shuffle plans need none")
    if _unit_lists(a, sp, "warp") != _unit_lists(b, sp, "warp") or a.in_bases("block") != b.in_bases("block"):
        raise InputError(
            "convert", "layouts", "move data between warps: convert through shared memory instead"
        )
    a_reg, b_reg = _unit_lists(a, sp, "register"), _unit_lists(b, sp, "register")
    a_thr, b_thr = _unit_lists(a, sp, "lane"), _unit_lists(b, sp, "lane")
    warp = _unit_lists(a, sp, "warp")
    limit = log2(max(1, 32 // elem_bits)) if elem_bits <= 32 else 0
    vec = [x for x in a_reg if x in b_reg][:limit]
    inter = [x for x in a_thr if x in b_thr]
    e = sorted(x for x in a_thr if x not in inter)
    f = sorted(x for x in b_thr if x not in inter)
    g = [x ^ y for x, y in zip(e, f)]
    r = f2.complement(vec + inter + g + warp, sp.bits)
    a_inv = _inverse(a, sp, a_reg, a_thr, warp)
    b_inv = _inverse(b, sp, b_reg, b_thr, warp)
    coset = _span(inter + g)
    rounds = []
    for i in range(1 << len(r)):
        base = _combine(r, i)
        src, send, recv = [0] * (1 << lane_bits), [0] * (1 << lane_bits), [0] * (1 << lane_bits)
        for x in coset:
            y = base ^ x
            ra, la = a_inv(y)
            rb, lb = b_inv(y)
            src[lb] = la
            send[la] = ra
            recv[lb] = rb
        rounds.append(Round(src, send, recv))
    return ShufflePlan(sp, vec, inter, e, f, g, r, rounds, elem_bits)


def _span(vs: list[int]) -> list[int]:
    out = [0]
    for v in vs:
        out += [x ^ v for x in out]
    return out


def _combine(vs: list[int], bits: int) -> int:
    out = 0
    for k, v in enumerate(vs):
        if (bits >> k) & 1:
            out ^= v
    return out


def _inverse(lay: LinearLayout, sp: Space, reg: list[int], lane: list[int], warp: list[int]):
    """tensor vector -> (register index, lane index) of the (warp-0) thread holding it."""
    cols = reg + lane + warp

    def inv(y: int) -> tuple[int, int]:
        x = f2.solve(cols, y)
        if x is None:
            raise InputError("convert", "layout", "is not surjective onto the tensor")
        return x & ((1 << len(reg)) - 1), (x >> len(reg)) & ((1 << len(lane)) - 1)

    return inv
