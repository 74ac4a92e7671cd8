"""Lemma 9.4 (the wavefronts of one access under a memory layout) and Lemma 9.5 (the bound on
a subspace avoiding two others), with the conflict dimensions both rest on (appendix §9.2).

>>> conflict_dim([], [0b11], [0b01, 0b10])
1
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models import f2
from bankproof.models.errors import log2
from bankproof.models.hardware import BANK_BYTES, BANKS, ldst_phases
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space

LANE_BITS = 5
ROW_BYTES = BANKS * BANK_BYTES  # one 128-byte segment: every bank once


def thread_set_pairs(
    layout: LinearLayout, space: Space, vec_bytes: int, kind: str
) -> tuple[list[int], list[int], list[int], int]:
    """(all lane vectors, lane vectors that share a phase, lane vectors split off by phases,
    number of phases).

    Phases follow the measured model (``models/hardware.py``): an access of 8 or 16 bytes per
    lane splits the warp into 2 or 4 phases by its top lane bits, except loads whose lane bit 0
    or 1 is broadcast (zero), which use phases twice as wide."""
    lanes = [space.pack_row_major(b) for b in layout.in_bases("lane")]
    phases = ldst_phases(vec_bytes, kind, lanes)
    keep = LANE_BITS - log2(phases)
    same = [v for v in lanes[:keep] if v]
    split = [v for v in lanes[keep:] if v]
    return [v for v in lanes if v], same, split, phases


def meet_space(u: list[int], v: list[int]) -> int:
    """dim(span(u) ∩ span(v))."""
    return f2.rank(u) + f2.rank(v) - f2.rank(u + v)


def conflict_dim(word: list[int], idx: list[int], lanes: list[int]) -> int:
    """log2 of the wavefronts per phase: lane differences that stay in one bank
    (span(word ∪ idx)) but leave the word (not in span(word)); Lemma 9.4 when ``word`` holds
    only vector bits."""
    return meet_space(word + idx, lanes) - meet_space(word, lanes)


def conflict_directions(word: list[int], idx: list[int], lanes: list[int]) -> list[int]:
    """A basis of the lane differences that stay in one bank but leave the word, modulo the word:
    ``len(...) == conflict_dim(word, idx, lanes)``.

    >>> conflict_directions([], [0b11], [0b01, 0b10])  # one segment bit, two lanes: both differ by it
    [3]
    """
    out: list[int] = []
    for v in f2.intersection(word + idx, lanes):
        if not f2.in_span(v, word + out):
            out.append(v)
    return sorted(f2.echelon(out))


@dataclass(frozen=True)
class Lemma94:
    """Lemma 9.4 for one access: ``wavefronts_per_instruction = phases * 2^c`` where ``c`` is the
    dimension of lane differences that stay in one bank but leave the word (the paper's
    ``dim(span(S_Vec ∪ S_Idx) ∩ span(L_Thr))`` when each lane covers whole banks).
    ``paper_applies`` says whether the paper's own hypotheses hold (``reason`` if not); the
    count is this model's, valid whenever ``applies``."""

    applies: bool
    wavefronts_per_instruction: int | None
    paper_applies: bool
    reason: str = ""
    directions: tuple[int, ...] = ()  # a basis of those lane differences (packed tensor bits)
    segment: tuple[int, ...] = ()  # M_Seg: the tensor vectors of the offset bits above a 128-byte row
    thread_span: tuple[int, ...] = ()  # lane vectors that share a phase


def lemma_9_4(memory: LinearLayout, dist: LinearLayout, elem_bits: int, kind: str, vec_bits: int) -> Lemma94:
    """Lemma 9.4's count for one access whose lanes move ``2^vec_bits`` elements each."""
    space = Space.of(memory)
    dist = dist.transpose_outs(memory.out_dim_names)
    offs = memory.in_bases("offset")
    if not LinearLayout((("offset", offs),), memory.out_dims).is_invertible():
        return Lemma94(False, None, False, "the memory layout is not invertible")
    cols = [space.pack_row_major(x) for x in offs]
    vec_bytes = (1 << vec_bits) * elem_bits // 8
    regs = [space.pack_row_major(x) for x in dist.in_bases("register") if any(x)]
    if any(x not in regs for x in cols[:vec_bits]):
        return Lemma94(False, None, False, "the memory layout's vector bits are not registers of the access")
    lanes = [space.pack_row_major(x) for x in dist.in_bases("lane")]
    reasons = []
    if vec_bytes < 4:
        reasons.append(f"each lane moves {vec_bytes} bytes, less than one bank")
    if any(x == 0 for x in lanes):
        reasons.append("the distributed layout broadcasts across lanes")
    nb = min(len(cols) - vec_bits, log2(ROW_BYTES // vec_bytes))
    n_sub = min(nb, log2(4 // vec_bytes)) if vec_bytes < 4 else 0
    word, idx = cols[: vec_bits + n_sub], cols[vec_bits + nb :]
    _, same, _, phases = thread_set_pairs(dist, space, vec_bytes, kind)
    directions = conflict_directions(word, idx, same)
    count = phases * (1 << len(directions))
    return Lemma94(True, count, not reasons, "; ".join(reasons), tuple(directions), tuple(idx), tuple(same))


def lemma_9_5_bound(d: int, dim_u: int, dim_v: int) -> int:
    """Lemma 9.5: the largest subspace of F2^d meeting U ∪ V only in 0 has dimension
    ``d - max(dim U, dim V)``.

    >>> lemma_9_5_bound(9, 5, 5)
    4
    """
    return d - max(dim_u, dim_v)
