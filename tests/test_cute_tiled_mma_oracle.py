"""bankproof's TiledMMA thread-value layouts against CuTe's own: random ``make_tiled_mma(atom,
AtomLayoutMNK, Tile<...>)`` (warp tilings in either order, tiles extended past the atoms and
permuted by layouts; SM80/SM89 mma.sync and SM90 GMMA SS/RS atoms) built by the CuTe DSL, whose
``tv_layout_{A,B,C}_tiled`` are committed in ``tests/data/cute_atoms_dsl.json`` (by
``lab/cute_oracle.py``); each must equal bankproof's, element for element."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.notation.cute_tiled_mma import read_tiled_mma, tiled_mma, tv_index

from tests.test_cute_atom_oracle import _offsets

TABLE = Path(__file__).resolve().parent / "data" / "cute_atoms_dsl.json"


def test_every_dsl_tiled_mma_is_bankproofs_element_for_element(capsys):
    table = json.loads(TABLE.read_text())
    cases = table["tiled_mmas"]
    checked = 0
    for case in cases:
        tm = tiled_mma(case["atom"], case["warps"], case["tile"])
        for op in "ABC":
            if case[op] is None:
                continue
            idx, _ = tv_index(tm, op)
            assert idx.flatten(order="F").tolist() == _offsets(case[op]), (case, op)
            checked += 1
    assert checked >= 500
    with capsys.disabled():
        print(f"\nTiledMMA oracle ({table['dsl']}): {len(cases)} tiled MMAs, {checked} operand layouts equal")


def test_underscore_spelled_out_is_the_dsls_underscore():
    """CUTLASS's ``Underscore`` and ``cute::Underscore`` are ``_``: every DSL tiled MMA whose tile
    has a ``_`` mode (the DSL's ``None``), spelled the long way, is still the DSL's layout."""
    import re

    cases = [c for c in json.loads(TABLE.read_text())["tiled_mmas"] if re.search(r"[<,]_[,>]", c["tile"])]
    assert len(cases) >= 100
    for i, case in enumerate(cases):
        spelling = ("Underscore", "cute::Underscore")[i % 2]
        tile = re.sub(r"(?<=[<,])_(?=[,>])", spelling, case["tile"])
        assert spelling in tile
        tm = tiled_mma(case["atom"], case["warps"], tile)
        for op in "ABC":
            if case[op] is not None:
                assert tv_index(tm, op)[0].flatten(order="F").tolist() == _offsets(case[op]), (tile, op)


def test_the_cutlass_type_spelling_is_the_same_tiled_mma():
    a = read_tiled_mma("TiledMMA<MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>, Layout<Shape<_2,_2,_1>>, "
                       "Tile<_32,Layout<Shape<_8,_2,_2>,Stride<_1,_16,_8>>,_16>>")  # fmt: skip
    b = tiled_mma(
        "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1):(1,2,0)", "make_tile(_32{}, (8,2,2):(1,16,8), _16{})"
    )
    for op in "ABC":
        assert np.array_equal(tv_index(a, op)[0], tv_index(b, op)[0])
    assert a.tile == (32, 32, 16)


@pytest.mark.skipif(importlib.util.find_spec("cutlass") is None, reason="the CuTe DSL is not installed")
def test_the_committed_tiled_mmas_are_what_the_dsl_says_now():
    from lab.cute_oracle import tiled_mma_cases

    table = json.loads(TABLE.read_text())
    assert tiled_mma_cases(table["tiled_mma_seed"]) == table["tiled_mmas"]
