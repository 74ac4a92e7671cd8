"""The layout pairs of Triton's optimal-swizzling unit tests (``unittest/Dialect/TritonGPU/
SwizzleTest.cpp``): bankproof's synthesized layout reaches 0 extra wavefronts on both sides with
Triton's vector width (its ``intersectionBasis`` of the register bases, at most 128 bits).

Not covered, by design: ``Test16x256U4Mma`` (4-bit elements). The wave64 (AMD) cases are
synthesized on gfx942 / gfx950, whose published lane groups are Triton's lane tiles."""

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


# ----- the wave64 cases (AMD): Triton's lane tiles are bankproof's published lane groups -----------
# Triton's dstTile {1, 2, 20} on 32 banks is gfx942's ds_read_b128 grouping, {1, 2, 12, 20} on 64
# banks gfx950's; the source side's default tile (consecutive lanes filling the banks) is gfx942's
# ds_write_b128. gfx950's ds_write_b128 has no published grouping: that side is unknown here.
BLOCKED_64x128 = {"register": [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]],
                  "lane": [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0], [2, 0]], "warp": [[4, 0], [8, 0]]}  # fmt: skip
WARP_SWAPPED = ({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64], [128]], "warp": [[256], [512]]},
                {"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64], [128]], "warp": [[512], [256]]})  # fmt: skip
AMD_CASES = {
    "Test64x128F16BlockedLinear32Bank": ("gfx942", [64, 128], "f16", BLOCKED_64x128, {
        "register": [[0, 1], [0, 2], [0, 8], [0, 16], [0, 32], [0, 64], [32, 0]],
        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], "warp": [[0, 0], [0, 0]]}),
    "Test64x128F16BlockedMfma64Bank": ("gfx950", [64, 128], "f16", BLOCKED_64x128, {
        "register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32], [0, 64], [32, 0]],
        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 8]], "warp": [[0, 0], [0, 0]]}),
    "Test1024F32WarpSwapped32Bank": ("gfx942", [1024], "f32", *WARP_SWAPPED),
    "Test1024F32WarpSwapped64Bank": ("gfx950", [1024], "f32", *WARP_SWAPPED),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(AMD_CASES))
def test_triton_wave64_swizzle_cases_reach_zero_conflicts(name):
    """Triton expects 0 conflicts on both sides from its optimal swizzle; bankproof's synthesized
    layout reads with 0 extra wavefronts, and writes so wherever the write's rule is published."""
    import bankproof as bp

    arch, shape, dtype, src, dst = AMD_CASES[name]
    dims = ["d0", "d1"][: len(shape)]
    spec = {"shape": shape, "dtype": dtype, "arch": arch, "dims": dims, "memory": {"offset_bases": []},
            "access": [{"name": "write", "kind": "store", "layout": {"bases": src}},
                       {"name": "read", "kind": "load", "layout": {"bases": dst}}]}  # fmt: skip
    r = bp.synth(spec=spec)
    read, write = r.access("read"), r.access("write")
    assert read.instr == "ds_read_b128" and read.wavefronts == read.ideal
    if arch == "gfx942":
        assert write.instr == "ds_write_b128" and write.wavefronts == write.ideal
        assert r.verdict == "proved"
    else:  # no published ds_write_b128 grouping on gfx950
        assert write.wavefronts is None and r.verdict == "unknown"
