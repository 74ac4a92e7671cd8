"""CuTe swizzles: the seed's bank table, validity, units, and print/parse round trips."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from bankproof.models.access import element_offsets
from bankproof.models.errors import InputError
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import parse_layout
from bankproof.models.notation.cute import STYLES, CuteLayout, Swizzle, parse_cute, to_cute
from bankproof.verifier.api.layout import bank_table
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import SEEDS


def seed_bank_table(title: str) -> np.ndarray:
    """The 8x8 bank map printed under ``title`` in seeds/002 (e.g. 'WITH Swizzle<3,2,3>')."""
    text = next(SEEDS.glob("002_*.txt")).read_text()
    block = text[text.index(title) :]
    rows = re.findall(r"^r\d+\s+((?:B\d\d\s*)+)$", block, re.M)[:8]
    return np.array([[int(b[1:]) for b in r.split()] for r in rows])


@pytest.mark.skipif(not SEEDS.exists(), reason="needs ../shared/seeds beside the repository")
@pytest.mark.parametrize(
    ("notation", "title"),
    [
        ("Sw<3,2,3> o (8,8):(1,8)", "WITH Swizzle<3,2,3> (8 x 8):"),
        ("(8,8):(1,8)", "WITHOUT Swizzle (8 x 8):"),
    ],
)
def test_seed_002_bank_tables(notation, title):
    got = bank_table(parse_cute(notation).memory_layout(), elem_bits=32)
    want = seed_bank_table(title)
    assert want.shape == (8, 8)
    assert np.array_equal(got, want)


def test_swizzle_apply_matches_definition():
    sw = Swizzle(3, 2, 3)
    for x in range(1024):
        assert sw.apply(x) == x ^ ((x & (0b111 << 5)) >> 3)
        assert sw.apply(sw.apply(x)) == x
    neg = Swizzle(2, 1, -3)
    assert neg.apply(0b110) == 0b110 ^ (0b110 << 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Sw<3,2,2> o (8,8):(1,8)", "cute: Swizzle S must satisfy |S| >= B = 3"),
        ("Sw<-1,2,3> o (8,8):(1,8)", "cute: Swizzle B must be >= 0, got -1"),
        ("Sw<3,-2,3> o (8,8):(1,8)", "cute: Swizzle M must be >= 0, got -2"),
        ("Sw<3,2,3> o (8,8):(1,-9)", "cute: stride entries must be >= 0"),
        ("Sw<3,2,3> o (8,6):(1,8)", "cute: shape sizes must be powers of two"),
        ("Sw<3,2,3> o (8,8):((1,2),8)", "cute: stride must have the same nesting as the shape"),
        ("Sw<3,2,3> o (8,8", "cute: layout ends early"),
        ("Swizzle<3,2> o (8,8):(1,8)", "cute: swizzle must look like Sw<B,M,S>"),
    ],
)
def test_invalid_swizzles_are_rejected_never_identity(text, message):
    with pytest.raises(InputError) as e:
        parse_cute(text)
    assert str(e.value).startswith(message)


def test_non_bijective_layout_names_two_coordinates():
    with pytest.raises(InputError, match=r"coordinates \(0, 1\) and \(2, 0\) share offset 2"):
        parse_cute("(4,4):(1,2)").memory_layout()


def test_byte_units_equal_element_units_scaled():
    """Hopper SW128: byte Sw<3,4,3> is element Sw<3,3,3> for 16-bit and Sw<3,2,3> for 32-bit."""
    b16 = parse_cute("Sw<3,4,3> o (8,64):(64,1)", "byte", 2, 1024).memory_layout()
    e16 = parse_cute("Sw<3,3,3> o (8,64):(64,1)").memory_layout()
    assert b16 == e16
    b32 = parse_cute("Sw<3,4,3> o (8,32):(32,1)", "byte", 4, 1024).memory_layout()
    assert b32 == parse_cute("Sw<3,2,3> o (8,32):(32,1)").memory_layout()


def test_byte_units_need_alignment_and_whole_elements():
    with pytest.raises(InputError, match="cute: base_align must be a multiple of 1024 bytes for Sw<3,4,3>"):
        parse_cute("Sw<3,4,3> o (8,64):(64,1)", "byte", 2, 128).memory_layout()
    with pytest.raises(
        InputError, match="cute: Swizzle M must be >= 2 for byte addresses of 4-byte elements"
    ):
        parse_cute("Sw<2,1,3> o (8,32):(32,1)", "byte", 4, 1024).memory_layout()


@given(st.integers(0, 3), st.integers(0, 3), st.integers(3, 5), st.booleans(), st.data())
def test_to_cute_round_trips(b, m, s, negative, data):
    rows = data.draw(st.sampled_from([8, 16, 32]))
    cols = data.draw(st.sampled_from([8, 16, 32, 64]))
    sw = f"Sw<{b},{m},{-s if negative else s}>"
    row_major = data.draw(st.booleans())
    text = f"{sw} o ({rows},{cols}):({cols},1)" if row_major else f"{sw} o ({rows},{cols}):(1,{rows})"
    try:
        L = parse_cute(text).memory_layout()
    except InputError:
        return  # the swizzle reaches past the buffer: not a bijection (checked elsewhere)
    if isinstance(L, PaddedLayout):  # it reaches past the buffer in a way padding gives
        assert element_offsets(L).tolist() == parse_cute(text).coord_offsets().tolist()
        return
    printed = to_cute(L)
    assert printed is not None
    assert parse_cute(printed.text()).memory_layout() == L


def test_nested_shapes():
    L = parse_cute("((4,2),8):((1,32),4)").memory_layout()
    inv = L.invert()
    assert inv.apply(dim0=5, dim1=0)["offset"] == 1 + 32  # sub-mode (1, 1): first sub-mode fastest
    assert to_cute(L).text() == "((4,2),8):((1,32),4)"


# ----- every printed form (issue: CuTe and Gluon inputs) ------------------------------------------
@st.composite
def cute_layouts(draw):
    """Random CuTe layouts as parse_cute returns them: nested power-of-two shapes, power-of-two
    (or zero) strides, an optional swizzle, offset, smem_ptr width and stage mode."""

    def mode(depth: int):
        if depth < 2 and draw(st.booleans()):
            subs = [mode(depth + 1) for _ in range(draw(st.integers(1, 3)))]
            return tuple(s for s, _ in subs), tuple(d for _, d in subs)
        return 1 << draw(st.integers(0, 4)), draw(st.sampled_from([0, *[1 << k for k in range(12)]]))

    rank = draw(st.integers(1, 3))
    modes = [mode(0) for _ in range(rank)]
    shape, stride = tuple(s for s, _ in modes), tuple(d for _, d in modes)
    stages = 0
    if rank >= 2 and draw(st.booleans()):
        stages = draw(st.integers(1, 5))
        shape, stride = (*shape, stages), (*stride, draw(st.integers(1, 1 << 14)))
    sw = None
    if draw(st.booleans()):
        b = draw(st.integers(1, 3))
        s = draw(st.integers(b, 4)) * draw(st.sampled_from([1, -1]))
        sw = Swizzle(b, draw(st.integers(0, 4)), s)
    ptr = draw(st.sampled_from([0, 8, 16, 32]))
    offset = 0 if ptr else draw(st.sampled_from([0, 0, 64, 4096]))
    return CuteLayout(sw, shape, stride, offset=offset, ptr_bits=ptr, stages=stages)


@given(cute_layouts(), st.sampled_from(STYLES))
def test_every_cute_form_round_trips(lay, style):
    """parse(print(x)) == x, and printing again gives the same text, in every printed style."""
    text = lay.text(style)
    rank = len(lay.shape) - (1 if lay.stages else 0)
    back = parse_cute(text, tensor_rank=rank)
    if (
        lay.ptr_bits
    ):  # a smem_ptr print is read as a swizzle of byte addresses, the buffer aligned to its span
        sw = lay.swizzle
        lay = replace(lay, units="byte", elem_bytes=lay.ptr_bits // 8, base_align=1 << sw.top_bit if sw else 0,
                      assumed_align=sw is not None)  # fmt: skip
    assert back == lay, text
    assert back.text(style) == text


@pytest.mark.parametrize(
    "text",
    [
        "Sw<3,3,3> o (8,64):(64,1)",
        "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)",
        "S<3,3,3> o 0 o (8,64):(64,1)",
        "Swizzle<3,3,3>{} o (8,64):(64,1)",
        "composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})",
        "cute::composition(cute::Swizzle<3,3,3>{}, make_layout(make_shape(Int<8>{}, Int<64>{}), LayoutRight{}))",
        "composition(Swizzle<3,3,3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{})))",
        "make_composed_layout(Swizzle<3,3,3>{}, _0{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})",
        "ComposedLayout<Swizzle<3,3,3>, _0, Layout<Shape<_8,_64>, Stride<_64,_1>>>",
        "Sw<3,3,3> ∘ (8,64):(64,1)",
    ],
)
def test_cute_forms_of_one_atom_agree(text):
    """The sm80 half atom written every way a CuTe user holds it is one memory layout."""
    want = parse_cute("Sw<3,3,3> o (8,64):(64,1)").memory_layout()
    assert parse_layout(text, dtype="f16").layout == want


def test_gmma_atom_in_byte_units_equals_element_atom_and_element_units_warn():
    """Sw<3,4,3> o smem_ptr[16b] (C++ print of GMMA's K-major SW128 atom for 16-bit types) is
    element Sw<3,3,3>: the smem_ptr says the swizzle acts on byte addresses, so it is read so
    whatever units are given (the buffer aligned to the swizzle's span, said in a warning). The
    DSL's print has no smem_ptr: read in element units it is another layout, with a warning."""
    cpp = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    dsl = "S<3,4,3> o 0 o (8,64):(64,1)"
    elem = parse_layout("Sw<3,3,3> o (8,64):(64,1)", dtype="f16").layout
    for text in (cpp, dsl):
        assert parse_layout(text, dtype="f16", units="byte", base_align=1024).layout == elem
    honoured = parse_layout(cpp, dtype="f16")
    assert honoured.layout == elem and "assumed aligned to 1024 bytes" in honoured.warnings[0]
    assert parse_layout(cpp).layout == elem  # no dtype: the print's 16 bits
    wrong = parse_layout(dsl, dtype="f16")
    assert wrong.layout != elem
    assert len(wrong.warnings) == 1 and "byte" in wrong.warnings[0]
    assert parse_layout(dsl, dtype="f8e4m3").warnings == ()  # 1-byte elements: units agree
    with pytest.raises(InputError, match="base_align must be a multiple of 1024"):
        parse_layout(cpp, dtype="f16", units="byte", base_align=128)
    with pytest.raises(InputError, match=r"dtype is 32-bit but the layout was printed for smem_ptr\[16b\]"):
        parse_layout(cpp, dtype="f32")


def test_tile_to_shape_matches_its_printed_result():
    atom = "composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})"
    tiled = parse_cute(f"tile_to_shape({atom}, make_shape(Int<128>{{}}, Int<64>{{}}))")
    assert tiled.text("cpp") == "Sw<3,3,3> o _0 o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))"
    right = parse_cute(f"tile_to_shape({atom}, make_shape(Int<16>{{}}, Int<128>{{}}), LayoutRight{{}})")
    assert right.text() == "Sw<3,3,3> o ((8,2),(64,2)):((64,1024),(1,512))"
    assert tiled.memory_layout().out_dims == (("dim0", 128), ("dim1", 64))


def test_three_pipeline_stages_are_checked_one_by_one():
    text = "Sw<3,3,3> o _0 o ((_8,_16),(_64,_1),_3):((_64,_512),(_1,_0),_8192)"
    p = parse_layout(text, shape=[128, 64], dtype="f16")
    assert p.shape == [128, 64]
    assert p.layout == parse_layout("Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", dtype="f16").layout
    # stages 8256 elements apart: the swizzle reaches the stage start, stage 1 is not the tile
    bad = "Sw<3,3,3> o (_8,_64,_3):(_64,_1,_8256)"
    with pytest.raises(InputError, match="cute: stage 1: layout is not "):
        parse_layout(bad, shape=[8, 64], dtype="f16")
    assert (
        parse_layout(bad, shape=[8, 64], dtype="f16", stage=0).layout
        == parse_layout("Sw<3,3,3> o (8,64):(64,1)", dtype="f16").layout
    )
    # a swizzle that reads a stage bit: each stage is the tile up to a constant XOR of 16-byte chunks
    xor = parse_layout("Sw<2,3,6> o (_8,_64,_3):(_64,_1,_512)", shape=[8, 64], dtype="f16")
    assert xor.layout == parse_layout("(8,64):(64,1)", dtype="f16").layout
    with pytest.raises(InputError, match="stage 1: layout starts 1 elements off a 16-byte boundary"):
        parse_layout("Sw<1,0,9> o (_8,_64,_2):(_64,_1,_512)", shape=[8, 64], dtype="f16")
    # a power-of-two stage count is a stage mode when the shape says so
    assert parse_layout("(_8,_64,_4):(_64,_1,_512)", shape=[8, 64]).shape == [8, 64]
    assert parse_layout("(_8,_64,_4):(_64,_1,_512)").shape == [8, 64, 4]


def test_a_gmma_layout_atom_by_name_is_the_layout_written_out():
    """CUTLASS code names its GMMA shared-memory atoms (``GMMA::Layout_K_SW128_Atom<half_t>``);
    read by name they are the layouts the hand-written examples spell out."""
    import bankproof

    named = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}))"
    spelled = "tile_to_shape(Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1), make_shape(_64{}, _64{}))"
    a, b = (bankproof.layout(t, dtype="f16", units="byte", base_align=1024) for t in (named, spelled))
    assert a.in_dims == b.in_dims
    assert bankproof.layout(
        "GMMA::Layout_MN_SW64_Atom<half_t>", dtype="f16"
    ).warnings  # byte swizzle, element units


def test_tile_to_shape_with_a_stage_mode_is_checked_stage_by_stage():
    """``tile_to_shape(atom, make_shape(M, K, Stages))`` (CUTLASS's pipelined smem layouts): CuTe pads
    the atom with a size-1 mode, so the stage mode is the slowest; every stage is the same layout."""
    import bankproof

    staged = bankproof.layout("tile_to_shape(Sw<3,3,3> o (8,64):(64,1), make_shape(_128{}, _64{}, _3{}))",
                              shape="128x64", dtype="f16")  # fmt: skip
    one = bankproof.layout(
        "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), make_shape(_128{}, _64{}))", shape="128x64", dtype="f16"
    )
    assert staged.in_dims == one.in_dims
