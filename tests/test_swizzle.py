"""The paper's algebra against enumeration: synthesized layouts meet the optimum, Lemma 9.4's
count equals the enumerated count, and the workbench rule of seeds/000 over all 2^20 toggles."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from bankproof.models import f2
from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.lemmas import conflict_dim, lemma_9_4
from bankproof.models.swizzle import optimal_swizzle, optimum_per_instruction, segment_basis
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import distributed, memory, shapes

BITS = st.sampled_from([8, 16, 32, 64])
STATS: Counter = Counter()


def per_instruction(dist, mem, bits, kind, instr="auto"):
    a = build_access(dist, mem, bits, kind, instr)
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    assert (counts == counts[0]).all()  # linear layouts: every instruction costs the same
    return a, int(counts[0]), int(ideals[0])


@pytest.mark.slow
@settings(max_examples=2000)
@given(st.data())
def test_synthesized_layout_meets_the_optimum(data):
    shape = data.draw(shapes())
    bits = data.draw(BITS)
    a = data.draw(distributed(shape))
    b = data.draw(distributed(shape))
    s = optimal_swizzle(a, b, bits)
    opt_a, opt_b = optimum_per_instruction(s)
    vec_bytes = (1 << len(s.vec)) * bits // 8
    _, got_a, _ = per_instruction(a, s.layout, bits, "store", f"st{vec_bytes * 8}")
    _, got_b, _ = per_instruction(b, s.layout, bits, "load", f"ld{vec_bytes * 8}")
    assert (got_a, got_b) == (opt_a, opt_b)
    assert (got_a, got_b) == (s.phases_a << s.a_conflict_dim, s.phases_b << s.b_conflict_dim)
    STATS["synth pairs"] += 1
    STATS["synth conflict-free"] += s.conflict_free


@pytest.mark.slow
@settings(max_examples=1000)
@given(st.data())
def test_lemma_9_4_equals_enumeration(data):
    shape = data.draw(shapes())
    bits = data.draw(BITS)
    dist = data.draw(distributed(shape))
    mem = data.draw(memory(shape))
    kind = data.draw(st.sampled_from(["load", "store"]))
    acc, got, _ = per_instruction(dist, mem, bits, kind)
    lem = lemma_9_4(mem, dist, bits, kind, acc.vector.bit_length() - 1)
    assert lem.applies
    assert lem.wavefronts_per_instruction == got
    STATS["lemma 9.4 checks"] += 1
    STATS["lemma 9.4 checks where the paper's hypotheses hold"] += lem.paper_applies


@pytest.mark.slow
def test_workbench_rule_over_all_toggles(capsys):
    """seeds/000: 16x32 fp32, segment bit j of the layout is m_j XOR mask_j (mask_j a 5-bit
    column mask). The read is conflict-free iff the four masks and n0 are independent, and its
    wavefronts per instruction are 2^dim(span(M_Seg) ∩ span(B_Thr)): all 2^20 configurations."""
    # Read: lanes 0-3 -> m0..m3, lane 4 -> n0; enumerate instruction 0 (register 0) of each.
    n = 1 << 20
    cfg = np.arange(n, dtype=np.int64)
    masks = [(cfg >> (5 * j)) & 31 for j in range(4)]
    lane = np.arange(32)
    m = lane % 16
    n0 = lane // 16
    # offset = 32*m + (n ^ sum_j m_j * mask_j), with n = n0 for register 0
    col = np.broadcast_to(n0, (n, 32)).copy()
    for j in range(4):
        col ^= ((m >> j) & 1)[None, :] * masks[j][:, None]
    offsets = (32 * m[None, :] + col) * 4
    counts = np.concatenate([evaluate_chunk(offsets[i : i + (1 << 16)]) for i in range(0, n, 1 << 16)])
    # Algebra per configuration: M_Seg = {m_j ^ mask_j}, B_Thr = span(m0..m3, n0). A combination
    # of segment vectors lies in span(B_Thr) iff its masks XOR to 0 or to n0 (= 1).
    hits = np.zeros(n, dtype=np.int64)
    for subset in range(16):
        x = np.zeros(n, dtype=np.int64)
        for j in range(4):
            if (subset >> j) & 1:
                x ^= masks[j]
        hits += (x == 0) | (x == 1)
    dims = np.log2(hits).astype(np.int64)
    # The four masks and n0 independent: no nonempty combination XORs to zero.
    vecs = masks + [np.ones(n, dtype=np.int64)]
    independent = np.ones(n, dtype=bool)
    for subset in range(1, 32):
        x = np.zeros(n, dtype=np.int64)
        for j in range(5):
            if (subset >> j) & 1:
                x ^= vecs[j]
        independent &= x != 0
    assert np.array_equal(counts == 1, independent)
    assert np.array_equal(counts, 1 << dims)
    with capsys.disabled():
        print(f"\nworkbench: {n} configurations, {int(independent.sum())} conflict-free, all match the rule")


def evaluate_chunk(offs):
    from bankproof.models.hardware import instruction

    counts, _, _ = evaluate(instruction("ld32"), offs)
    return counts


def test_print_stats(capsys):
    with capsys.disabled():
        print("\nalgebra cross-checks: " + ", ".join(f"{k} {v}" for k, v in sorted(STATS.items())))


def test_seed_construction_steps():
    """seeds/001 §04, step for step."""
    from bankproof.models.notation import parse_layout
    from bankproof.models.notation.formula import formula_text

    A = parse_layout(
        '{"register": [[1,0],[2,0],[4,0],[8,0]], "lane": [[0,1],[0,2],[0,4],[0,8],[0,16]]}', [16, 32]
    )
    B = parse_layout(
        '{"register": [[0,2],[0,4],[0,8],[0,16]], "lane": [[1,0],[2,0],[4,0],[8,0],[0,1]]}', [16, 32]
    )
    s = optimal_swizzle(A.layout, B.layout, 32, dim_names=["m", "n"])
    name = s.space.name
    assert (s.vec, s.b, s.ell) == ([], 5, 4)
    assert [name(x) for x in s.inter] == ["n0"]
    assert [name(x) for x in s.e] == ["n1", "n2", "n3", "n4"]
    assert [name(x) for x in s.f] == ["m0", "m1", "m2", "m3"]
    assert [name(x) for x in s.h] == ["n1⊕m0", "n2⊕m1", "n3⊕m2", "n4⊕m3"]
    assert s.c == [] and s.idx == s.h
    assert [name(x) for x in s.bank] == ["n0", "n1", "n2", "n3", "n4"]
    assert formula_text(s.layout, ["m", "n"]) == "32*m + (n ^ (2*m))"
    assert optimum_per_instruction(s) == (1, 1)


@pytest.mark.parametrize(("ell", "a_dim", "b_dim"), [(2, 0, 0), (4, 0, 2), (5, 1, 3), (6, 2, 4)])
def test_padding_meets_both_lower_bounds(ell, a_dim, b_dim):
    """E = {e1, e2}, F = {f1..f4}, I = {i}, C = {}: d - v = 7. The lower bounds are
    a >= ell - (7 - |A|) and b >= ell - (7 - |B|) with |A| = 3, |B| = 5; padding meets both."""
    e1, e2, g1, g2, g3, g4, i = (1 << k for k in range(7))
    h, idx, padding = segment_basis([e1, e2], [g1, g2, g3, g4], [i], [], ell, [])
    assert h == [e1 ^ g1, e2 ^ g2] and len(idx) == ell and f2.rank(idx) == ell
    a_thr, b_thr = [i, e1, e2], [i, g1, g2, g3, g4]
    assert conflict_dim([], idx, a_thr) == a_dim == max(0, ell - (7 - 3))
    assert conflict_dim([], idx, b_thr) == b_dim == max(0, ell - (7 - 5))
