"""CuTe swizzles: the seed's bank table, validity, units, and print/parse round trips."""

from __future__ import annotations

import re

import numpy as np
import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation.cute import Swizzle, parse_cute, to_cute
from bankproof.verifier.describe import bank_table
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
        ("Sw<3,2,3> o (8,8):(1,9)", "cute: stride entries must be powers of two"),
        ("Sw<3,2,3> o (8,6):(1,8)", "cute: shape sizes must be powers of two"),
        ("Sw<3,2,3> o (8,8):((1,2),8)", "cute: stride must have the same nesting as the shape"),
        ("Sw<3,2,3> o (8,8", "cute: layout must look like (shape):(stride)"),
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
    printed = to_cute(L)
    assert printed is not None
    assert parse_cute(printed.text()).memory_layout() == L


def test_nested_shapes():
    L = parse_cute("((4,2),8):((1,32),4)").memory_layout()
    inv = L.invert()
    assert inv.apply(dim0=5, dim1=0)["offset"] == 1 + 32  # sub-mode (1, 1): first sub-mode fastest
    assert to_cute(L).text() == "((4,2),8):((1,32),4)"
