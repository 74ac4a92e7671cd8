"""CuTe's composition(A, B) as a memory layout and as an access's view of the tile (FA2's sVt)."""

from pathlib import Path

import numpy as np
import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation.cute import parse_cute
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_values import Composed, Layout
from bankproof.models.notation.cute_view import read_view
from bankproof.verifier.api import verify
from bankproof.verifier.api.spec_file import spec_from_text, tomllib

ROOT = Path(__file__).resolve().parents[1]
KV = (
    "tile_to_shape(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, Int<64>>, Stride<Int<64>, _1>>{}), "
    "Shape<Int<64>, Int<128>>{})"
)


def test_composition_of_a_swizzled_tile_with_a_row_major_view_is_its_transpose():
    """FA2's SmemLayoutVtransposed: every (d, n) reaches the offset (n, d) reaches in SmemLayoutKV."""
    vt = f"composition({KV}, make_layout(Shape<Int<128>, Int<64>>{{}}, GenRowMajor{{}}))"
    v = read(vt)
    assert isinstance(v, Composed) and v.swizzle.text() == "Sw<3,3,3>"
    assert v.layout == Layout(((64, 2), 64), ((1, 4096), 64))
    kv, t = parse_cute(KV, elem_bytes=2).coord_offsets(), parse_cute(vt, elem_bytes=2).coord_offsets()
    assert np.array_equal(kv.T, t)


def test_composition_groups_runs_of_bits_under_the_inner_modes():
    v = read("composition(Layout<Shape<_4, _8>, Stride<_8, _1>>{}, Layout<Shape<_8, _4>, Stride<_4, _1>>{})")
    assert v == Layout((8, 4), (1, 8))
    plain = read(
        "composition(make_layout(make_shape(_16{})), make_layout(make_shape(_4{}, _4{}), LayoutRight{}))"
    )
    assert plain == Layout((4, 4), (4, 1))


@pytest.mark.parametrize(
    "text, problem",
    [
        ("composition(SmemLayoutKV{}, make_layout(Shape<_8, _8>{}))", "type name"),
        ("composition(make_layout(make_shape(_8{})), make_layout(make_shape(_16{})))", "more than the outer"),
        (
            "composition(make_layout(make_shape(_16{})), make_layout(make_shape(_4{}), make_stride(_8{})))",
            "beyond",
        ),
        ("composition(make_layout(make_shape(_12{})), make_layout(make_shape(_4{})))", "power-of-two sizes"),
        (
            "composition(make_layout(make_shape(_16{})), make_layout(make_shape(_4{}), make_stride(_3{})))",
            "power-of-two strides",
        ),
    ],
)
def test_composition_refusals_name_what_to_write(text, problem):
    with pytest.raises(InputError) as e:
        read(text)
    assert problem in e.value.problem


def test_view_maps_view_coordinates_to_tile_coordinates():
    v = read_view("make_layout(Shape<Int<128>, Int<64>>{}, GenRowMajor{})", [64, 128])
    assert v.shape == [128, 64]
    assert [v.tile_coord(c) for c in [(1, 0), (0, 1), (5, 3)]] == [(0, 1), (1, 0), (3, 5)]


@pytest.mark.parametrize(
    "view, problem",
    [
        ("make_layout(Shape<Int<64>, Int<64>>{}, GenRowMajor{})", "has 4096 elements"),
        ("Sw<3,3,3> o (128,64):(64,1)", "plain layout"),
        ("(128,64):(1,1)", "exactly once"),
        ("(128,64):(3,384)", "power-of-two"),
        (7, "string"),
    ],
)
def test_view_refusals(view, problem):
    with pytest.raises(InputError) as e:
        read_view(view, [64, 128])
    assert problem in e.value.problem


def _example(view: str | None) -> str:
    text = (ROOT / "examples" / "cute_fa2_vt_128x64.toml").read_text()
    old = 'view = "make_layout(Shape<Int<128>, Int<64>>{}, GenRowMajor{})"\n'
    assert old in text
    return text.replace(old, "" if view is None else f'view = "{view}"\n')


def test_view_equals_the_hand_transposed_fragment():
    """The view read through CuTe's composition gives the fragment the hand-made transposed=true
    flag gives: the same (register, lane, warp) -> (kv, d) map."""
    viewed = spec_from_text(_example("make_layout(Shape<Int<128>, Int<64>>{}, GenRowMajor{})")).accesses[1]
    hand = _example(None).replace('half_t>" }', 'half_t>", transposed = true }')
    assert viewed.layout == spec_from_text(hand).accesses[1].layout


def test_a_wrong_view_is_caught_by_the_instruction():
    """A column-major view (no transpose) hands ldmatrix.trans elements it cannot deliver: refused
    naming the access, not counted."""
    with pytest.raises(InputError) as e:
        verify(spec=tomllib.loads(_example("make_layout(Shape<Int<128>, Int<64>>{}, GenColMajor{})")))
    assert "s2r_vt" in e.value.where and "cannot deliver" in e.value.problem


def test_view_is_refused_with_a_non_cute_layout():
    text = _example(None).replace(
        "layout.cute_mma", 'view = "(128,64):(64,1)"\nlayout.bases = { register = [], lane = [] }\n#'
    )
    with pytest.raises(InputError) as e:
        spec_from_text(text)
    assert "view" in e.value.where + e.value.field
