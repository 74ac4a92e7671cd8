"""Triton attributes: golden layouts written by hand from the definitions, printing, errors.

Regression cases marked "Triton 3.9 gives" are answers of Triton 3.9.0's ``to_linear_layout``
that an earlier version of our conversion got wrong."""

from __future__ import annotations

import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation import parse_layout
from bankproof.models.notation.triton import linear_text, parse_triton

SWZ = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>"


def bases(text: str, shape: list[int]) -> dict:
    return parse_triton(text).to_layout(shape).as_dict()


def test_swizzled_shared_xor_2m():
    """Def 4.11 with vec 2: offset bit 5+i carries row 2^i and column 2^(i+1) (seeds' XOR 2m)."""
    assert bases(SWZ, [16, 32])["offset"] == [
        [0, 1],
        [0, 2],
        [0, 4],
        [0, 8],
        [0, 16],
        [1, 2],
        [2, 4],
        [4, 8],
        [8, 16],
    ]


def test_swizzled_shared_column_major_and_wrap():
    # order [0, 1]: dim0 is the column; maxPhase 4 wraps rows 4 and up back to phase 0.
    got = bases("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 4, order = [0, 1]}>", [8, 8])
    assert got["offset"] == [[1, 0], [2, 0], [4, 0], [1, 1], [2, 2], [0, 4]]


def test_blocked_wraps_registers_along_order():
    got = bases(
        "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>",
        [16, 64],
    )
    assert got["register"] == [[0, 32], [1, 0], [2, 0], [4, 0], [8, 0]]  # minor dim (order[0]) first
    assert got["lane"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]


def test_blocked_smaller_shape_drops_registers_and_broadcasts_lanes():
    # Triton 3.9 gives: register bits beyond the shape are removed; lane bits become zeros.
    got = bases(
        "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>",
        [2, 8],
    )
    assert got["register"] == [[0, 1], [0, 2]]
    assert got["lane"] == [[0, 4], [0, 0], [0, 0], [1, 0], [0, 0]]


def test_mma_v2_accumulator_matches_ptx_fragment():
    """PTX m16n8 C fragment: c0,c1 at (lane/4, 2*(lane%4) + {0,1}); c2,c3 eight rows down."""
    got = bases(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        [16, 8],
    )
    assert got == {
        "register": [[0, 1], [8, 0]],
        "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
        "warp": [],
        "block": [],
    }


def test_mma_v2_smaller_shape_keeps_zero_registers():
    # Triton 3.9 gives: unlike blocked, mma layouts keep redundant registers as zero bases.
    got = bases(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 2], instrShape = [16, 8]}>",
        [4, 16],
    )
    assert got["register"] == [[0, 1], [0, 0]]


def test_dot_operand_a_matches_ptx_fragment():
    """PTX m16n8k16 f16 A fragment: a0,a1 (lane/4, 2*(lane%4)+{0,1}); a2,a3 +8 rows; a4..a7 +8 cols."""
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>"
    got = bases(f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = 2}}>", [16, 16])
    assert got["register"] == [[0, 1], [8, 0], [0, 8]]
    assert got["lane"] == [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]


def test_dot_operand_b_matches_ptx_fragment():
    """PTX m16n8k16 f16 B fragment: b0,b1 (2*(lane%4)+{0,1}, lane/4); b2,b3 eight k down."""
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>"
    got = bases(f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = 2}}>", [16, 8])
    assert got["register"] == [[1, 0], [8, 0]]
    assert got["lane"] == [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]]


def test_dot_operand_cga_is_broadcast_along_k():
    # Triton 3.9 gives: the parent's CTA split of M is a split of K for operand B -> broadcast.
    mma = (
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 1], instrShape = [16, 8], "
        "CGALayout = [[1, 0]]}>"
    )
    got = bases(f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = 2}}>", [64, 16])
    assert got == {
        "register": [[1, 0], [8, 0], [16, 0], [32, 0], [0, 8]],
        "lane": [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]],
        "warp": [[0, 0]],
        "block": [[0, 0]],
    }


def test_nvmma_shared_128B_fp16_atom():
    """vec = 8, perPhase = 1, maxPhase = 8: row r XORs 16-byte chunk r % 8."""
    got = bases(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", [8, 64]
    )
    assert got["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32]]


def test_nvmma_shared_column_panels_are_outermost():
    got = bases(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>", [16, 64]
    )
    assert got["offset"][5:] == [[1, 0], [2, 8], [4, 16], [8, 0], [0, 32]]


def test_nvmma_shared_unswizzled_transposed_is_column_major():
    # Triton 3.9 gives: with transposed = true the contiguous dim is dim0.
    got = bases(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = true, elementBitWidth = 16}>", [128, 16]
    )
    assert got["offset"] == [[1 << i, 0] for i in range(7)] + [[0, 1 << i] for i in range(4)]


def test_nvmma_shared_unswizzled_repeats_tma_box_last_dim_first():
    # Triton 3.9 gives: past the 256-element TMA box, dim1 repeats before dim0.
    got = bases(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>", [512, 512]
    )
    assert got["offset"][-2:] == [[0, 256], [256, 0]]


def test_slice_removes_the_dim():
    parent = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]}>"
    # The parent's tile is 16 columns wide; a 32-column slice wraps once into registers.
    got = bases(f"#ttg.slice<{{dim = 0, parent = {parent}}}>", [32])
    assert got == {"register": [[1], [16]], "lane": [[2], [4], [8], [0], [0]], "warp": [[0]], "block": []}


def test_padded_shared_offsets():
    lay = parse_triton("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 16]}>").to_layout([16, 16])
    assert lay.physical_offsets()[[0, 31, 32, 255]].tolist() == [0, 31, 36, 283]
    assert lay.linear.in_bases("offset")[:5] == ((0, 1), (0, 2), (0, 4), (0, 8), (1, 0))


# Printed by Triton 3.9.0 itself (gluon kernel -> TTGIR); printing must reproduce the text.
TRITON_PRINTED = [
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 2]], warp = [[0, 0]], block = []}>",
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 8, fp4Padded = true}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
    "#ttg.shared_linear<{offset = [[0, 1], [1, 0], [2, 0], [4, 0]]}, alignment = 128>",
    "#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [16, 16]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16, CGALayout = [[1, 0]]}>",
]


@pytest.mark.parametrize("text", TRITON_PRINTED)
def test_print_reproduces_triton_text(text):
    assert parse_triton(text).text() == text


def test_aliases_are_resolved():
    text = (
        "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>\n"
        "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>"
    )
    a = parse_triton(text)
    assert a.text() == (
        "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
        "warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>"
    )


def test_linear_text_round_trip():
    d = parse_triton(
        "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]}>"
    )
    lay = d.to_layout([16, 16])
    assert parse_triton(linear_text(lay)).to_layout([16, 16]) == lay


BAD = [
    (
        "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 6, order = [1, 0]}>",
        "swizzled_shared: maxPhase must be a power of two, got 6",
    ),
    (
        "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 6], warpsPerCTA = [1, 1], order = [1, 0]}>",
        "blocked: threadsPerWarp entries must be powers of two, got [2, 6]",
    ),
    (
        "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [0, 0]}>",
        "blocked: order must be a permutation of 0..1, got [0, 0]",
    ),
    (
        "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1], order = [1, 0]}>",
        "blocked: warpsPerCTA must have 2 entries (the layout's rank), got [1]",
    ),
    (
        "#ttg.nvmma_shared<{swizzlingByteWidth = 96, transposed = false, elementBitWidth = 16}>",
        "nvmma_shared: swizzlingByteWidth must be 0, 32, 64 or 128, got 96",
    ),
    (
        "#ttg.dot_op<{opIdx = 2, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
        "warpsPerCTA = [1, 1], order = [1, 0]}>}>",
        "dot_op: opIdx must be 0 or 1, got 2",
    ),
    (
        "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0], foo = 1}>",
        "blocked: foo is not a field of blocked",
    ),
    ("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", "triton: attribute unknown alias #mma"),
    ("#ttg.amd_mfma<{}>", "amd_mfma: version is missing"),
    (
        "#ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], instrShape = [64, 4, 4], isTransposed = false}>",
        "amd_mfma: isTransposed must be true for a 64x4 instruction",
    ),
    (
        "#ttg.amd_mfma<{version = 5, warpsPerCTA = [1, 1], instrShape = [16, 16, 16]}>",
        "amd_mfma: version must be 1 to 4",
    ),
    (
        "#ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], instrShape = [8, 8, 4]}>",
        "amd_mfma: instrShape must be",
    ),
    (
        "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = []}, instrShape = [16, 16, 16]}>",
        "amd_wmma: instrShape must be [16, 16, K] with K 32 or 64 or 128 for version 3",
    ),
    (
        "#ttg.amd_wmma<{version = 2, ctaLayout = {warp = [[0, 2]]}}>",
        "amd_wmma: ctaLayout must reach every tile",
    ),
    ("#ttg.amd_wmma<{version = 2, ctaLayout = {lane = []}}>", "amd_wmma: ctaLayout must be"),
    (
        "#ttg.amd_wmma<{version = 2, ctaLayout = {warp = [[0, 0, 1]]}}>",
        "amd_wmma: ctaLayout.warp bases must have 2 coordinates",
    ),
    (
        "#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_wmma<{version = 1, ctaLayout = {warp = []}}>, kWidth = 4}>",
        "dot_op: kWidth must be 8 or 16 for a WMMA version 1 parent",
    ),
    ("#ttg.blocked<{sizePerThread = [1, 1]", "triton: attribute unexpected end of text"),
    (
        "#ttg.nvidia_mma<{versionMajor = 1, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        "nvidia_mma: versionMajor must be 2 (Ampere mma) or 3 (Hopper wgmma), got 1",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_attributes_name_kind_and_field(text, message):
    with pytest.raises(InputError) as e:
        parse_triton(text)
    assert str(e.value).startswith(message)


def test_shape_errors():
    with pytest.raises(InputError, match="swizzled_shared: shape sizes must be powers of two, got 16x24"):
        parse_triton(SWZ).to_layout([16, 24])
    with pytest.raises(
        InputError, match="nvmma_shared: transposed with swizzlingByteWidth = 0 is supported for rank 2"
    ):
        parse_triton(
            "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = true, elementBitWidth = 16, "
            "CGALayout = [[0, 0, 1]]}>"
        ).to_layout([8, 8, 8])
    with pytest.raises(InputError, match="nvmma_shared: shape must have 2 dims"):
        parse_triton(
            "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>"
        ).to_layout([64])


def test_swizzled_shared_for_finds_every_swizzled_shared_layout():
    """The search (with its quick row-base filter) recovers an attribute with the same offsets."""
    import random

    from bankproof.models.notation.triton import SwizzledShared, swizzled_shared_for

    rng = random.Random(1)
    for _ in range(300):
        shape = [1 << rng.randint(0, 7), 1 << rng.randint(0, 7)]
        order = tuple(rng.sample([0, 1], 2))
        vec, pp, mp = (1 << rng.randint(0, 7) for _ in range(3))
        want = SwizzledShared(vec, pp, mp, order).to_layout(shape).with_in_bases("block", [])
        got = swizzled_shared_for(want)
        assert got is not None and got.to_layout(shape).in_bases("offset") == want.in_bases("offset")


@pytest.mark.parametrize("tpw", [[2, 8], [4, 16], [2, 32], [1, 64]])
def test_warps_of_other_sizes_parse_as_triton_does(tpw):
    """Triton 3.9.0 parses any power-of-two warp (AMD uses 64 lanes): lane bases = log2(product)."""
    text = f"#ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = {tpw}, warpsPerCTA = [1, 1], order = [1, 0]}}>"
    lay = parse_layout(text, [64, 64]).layout
    assert len(lay.in_bases("lane")) == (tpw[0] * tpw[1]).bit_length() - 1
    assert lay.in_bases("lane")[0] == ((0, 1) if tpw[1] > 1 else (1, 0))


def test_nvmma_rank_field_as_triton_writes_it():
    """Triton 3.9.0 writes ``rank = 3`` for a 3-D nvmma_shared without a CGALayout (read from its
    printer's output); it parses, prints back the same, and lays out a 3-D buffer."""
    text = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 3}>"
    attr = parse_triton(text)
    assert attr.rank == 3 and attr.text() == text
    lay = parse_layout(text, [2, 64, 64], dtype="f16").layout
    assert lay.in_bases("offset")[-1] == (1, 0, 0) and lay.is_invertible()
    two = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 2}>"
    assert parse_triton(two).text() == two.replace(", rank = 2", "")
    with pytest.raises(InputError, match="nvmma_shared: rank must equal the CGALayout's rank \\(2\\), got 3"):
        parse_triton(text.replace("rank = 3", "rank = 3, CGALayout = [[0, 1]]"))
    with pytest.raises(InputError, match="shape must have 3 dims"):
        parse_layout(text, [64, 64])


@pytest.mark.parametrize(
    ("swizzle", "alignment"), [(128, 1024), (64, 512), (32, 256), (0, 128)]
)  # fmt: skip
def test_shared_linear_keeps_nvmma_alignment(swizzle, alignment):
    """Re-printed as shared_linear, an nvmma_shared buffer keeps Triton's getAlignment (128 x
    maxPhase): TMA and wgmma depend on it. swizzled_shared cannot say more than 16 bytes, so it
    is not offered as an equivalent."""
    from bankproof.verifier.api.layout import describe_layout

    text = f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swizzle}, transposed = false, elementBitWidth = 16}}>"
    notations = describe_layout(text, [64, 64], "f16").notations
    assert notations["triton"].endswith(f"alignment = {alignment}>")
    assert "swizzled_shared" not in notations
    again = describe_layout(notations["triton"], [64, 64], "f16").notations
    assert again["triton"] == notations["triton"]  # a shared_linear keeps its own alignment


@pytest.mark.parametrize("dtype", ["f4E2M1FN", "f4e2m1", "e2m1", "i4"])
def test_four_bit_elements_parse(dtype):
    """4-bit element types (Triton packs fp4 two per byte) parse; banks are per byte address."""
    from bankproof.verifier.api.layout import describe_layout

    r = describe_layout("32*m + n", [2, 32], dtype, banks=True)
    assert r.banks[0][:10] == [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]  # 8 nibbles per 4-byte word
    assert r.banks[1][0] == 4
