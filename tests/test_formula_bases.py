"""Formulas and explicit bases: parsing, printing, and errors that name the problem."""

from __future__ import annotations

import pytest
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import detect, parse_layout
from bankproof.models.notation.bases import parse_bases
from bankproof.models.notation.formula import formula_text, parse_formula
from bankproof.models.notation.triton import parse_triton
from hypothesis import given
from hypothesis import strategies as st

SEED_SWIZZLES = {
    "32*m + n": [[1, 0], [2, 0], [4, 0], [8, 0]],
    "32*m + (n ^ m)": [[1, 1], [2, 2], [4, 4], [8, 8]],
    "32*m + (n ^ (2*m))": [[1, 2], [2, 4], [4, 8], [8, 16]],
}


@pytest.mark.parametrize(("formula", "segment_bases"), SEED_SWIZZLES.items())
def test_seed_swizzles(formula, segment_bases):
    """seeds/000: the three 16x32 layouts; offset bits 5..8 are the segment bits."""
    L = parse_formula(formula, ["m", "n"], [16, 32])
    assert L.as_dict()["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]] + segment_bases
    assert formula_text(L, ["m", "n"]) == formula


def test_formula_equals_triton_swizzle():
    t = parse_triton(
        "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>"
    ).to_layout([16, 32])
    f = parse_formula("32*m + (n ^ (2*m))", ["m", "n"], [16, 32])
    assert f.in_bases("offset") == t.in_bases("offset") and f.out_dims == t.out_dims


@st.composite
def memory_layouts(draw):
    """Random invertible memory layouts: a permutation of unit vectors, then XOR mixing."""
    shape = [draw(st.sampled_from([2, 4, 8, 16])) for _ in range(2)]
    units = [[1 << i, 0] for i in range(shape[0].bit_length() - 1)] + [
        [0, 1 << i] for i in range(shape[1].bit_length() - 1)
    ]
    order = draw(st.permutations(range(len(units))))
    bases = [units[i][:] for i in order]
    for i in range(len(bases)):
        for j in range(i):
            if draw(st.booleans()) and draw(st.booleans()):
                bases[i] = [a ^ b for a, b in zip(bases[i], bases[j])]
    return LinearLayout.from_bases({"offset": bases}, {"dim0": shape[0], "dim1": shape[1]}), shape


@given(memory_layouts())
def test_formula_round_trip(ls):
    L, shape = ls
    text = formula_text(L, ["m", "n"])
    assert parse_formula(text, ["m", "n"], shape) == L


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("33*m + n", "formula: layout is not a bijection onto [0, 512)"),
        ("m + n", "formula: layout is not a bijection onto [0, 512)"),
        ("__import__('os')", "formula: text may only use dim names"),
        ("m +", "formula: text is not a valid expression"),
        ("k + 32*m", "formula: name is not a dim (dims: m, n), got k"),
        ("32*m + n // 0", "formula: text divides by zero"),
        ("32*m + (n ^ (m & (m >> 1)))", "formula: layout is not linear over F2"),
    ],
)
def test_formula_errors(text, message):
    with pytest.raises(InputError) as e:
        parse_formula(text, ["m", "n"], [16, 32])
    assert str(e.value).startswith(message)


def test_bases_notation():
    L = parse_bases({"register": [[0, 1]], "lane": [[1, 0]]}, [2, 2])
    assert L.as_dict() == {"register": [[0, 1]], "lane": [[1, 0]], "warp": [], "block": []}
    with pytest.raises(InputError, match="bases: thread is not an input dim"):
        parse_bases({"thread": [[1]]}, [2])
    with pytest.raises(InputError, match="bases: offset bases must have 2 coordinates"):
        parse_bases({"offset": [[1]]}, [2, 2])
    with pytest.raises(InputError, match="bases: text is not valid JSON"):
        parse_bases("{offset: 1}", [2])


def test_detect_and_dispatch():
    assert detect("  #ttg.blocked<{}>") == "triton"
    assert detect("(8,8):(1,8)") == "cute"
    assert detect("formula: m + 8*n") == "formula"
    p = parse_layout("Sw<3,2,3> o (8,8):(1,8)")
    assert (p.notation, p.kind, p.shape) == ("cute", "memory", [8, 8])
    with pytest.raises(InputError, match="layout: shape is required for Triton notations"):
        parse_layout("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>")
    with pytest.raises(InputError, match="shape: value has 2\\^26 elements, over the limit of 2\\^24"):
        parse_layout("m + 8192*n", [8192, 8192])
