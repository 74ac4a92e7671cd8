"""The layout pairs of Triton's optimal-swizzling unit tests (``unittest/Dialect/TritonGPU/
SwizzleTest.cpp``): bankproof's synthesized layout reaches 0 extra wavefronts on both sides with
Triton's vector width (its ``intersectionBasis`` of the register bases, at most 128 bits).

Not covered, by design: ``Test16x256U4Mma`` (4-bit elements) and the two 64-lane / 64-bank AMD
cases (``...BlockedLinear32Bank`` uses 6 lane bits, ``...Mfma64Bank`` 64 banks)."""

from __future__ import annotations

import pytest
from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.layout import LinearLayout
from bankproof.models.notation.triton_ll import transpose_dims
from bankproof.models.swizzle import optimal_swizzle


def ll(reg, lane, warp, shape):
    return LinearLayout.from_bases(
        {"register": reg, "lane": lane, "warp": warp, "block": []}, {"dim0": shape[0], "dim1": shape[1]}
    )


F8 = ll(
    [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0]],
    [[0, 16], [0, 32], [0, 64], [4, 0], [8, 0]],
    [[16, 0], [32, 0], [64, 0]],
    [128, 128],
)
F16 = ll(
    [[1, 0], [2, 0], [4, 0], [0, 32], [0, 64]],
    [[8, 0], [16, 0], [32, 0], [64, 0], [0, 1]],
    [[0, 2], [0, 4], [0, 8], [0, 16]],
    [128, 128],
)
F16_T = ll(
    [[0, 1], [0, 2], [0, 4], [32, 0], [64, 0]],
    [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]],
    [[2, 0], [4, 0], [8, 0], [16, 0]],
    [128, 128],
)
CASES = {
    "Test128x128Float8Transpose": (F8, transpose_dims(F8, [1, 0]), 8),
    "Test16x16Bf16BlockedMma": (
        ll([[0, 1], [0, 2], [0, 4]], [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], [], [16, 16]),
        ll([[0, 1], [8, 0], [0, 8]], [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], [], [16, 16]),
        16,
    ),
    "Test32x16F32Transpose": (
        ll([[4, 0], [8, 0], [16, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], [[2, 0]], [32, 16]),
        ll([[0, 2], [0, 4], [0, 8]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [[0, 1]], [32, 16]),
        32,
    ),
    "Test128x128F16Transpose": (F16, F16_T, 16),
}


def triton_vector_elements(a: LinearLayout, b: LinearLayout, bits: int) -> int:
    common = [r for r in a.in_bases("register") if r in b.in_bases("register")]
    return 1 << min(len(common), (128 // bits).bit_length() - 1)


@pytest.mark.parametrize("name", CASES)
def test_triton_swizzle_cases_conflict_free_at_tritons_width(name):
    a, b, bits = CASES[name]
    s = optimal_swizzle(a, b, bits)
    vec = 1 << len(s.vec)
    assert vec == triton_vector_elements(a, b, bits)
    width = vec * bits
    for dist, kind in ((a, "store"), (b, "load")):
        acc = build_access(dist, s.layout, bits, kind, f"{'st' if kind == 'store' else 'ld'}{width}")
        counts, ideals, _ = evaluate(acc.instr, acc.addresses)
        assert (counts == ideals).all(), (name, kind, counts.max(), ideals.max())
