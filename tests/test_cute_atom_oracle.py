"""bankproof's MMA atoms against CuTe's own: every atom the CuTe DSL defines (the table
``tests/data/cute_atoms_dsl.json``, written by ``lab/cute_oracle.py`` from the DSL, re-derived here
whenever the DSL is installed) must have bankproof's A, B and C thread-value layouts, element
for element. Atoms the DSL has no warp op for (s8/u8, f64) come from CUTLASS's
``mma_traits_sm80.hpp`` text; their tests are in ``tests/test_cute_access.py``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_mma_atoms import MMA_ATOMS, mma_atom
from bankproof.models.notation.cute_shapes import evaluate, size
from bankproof.models.notation.cute_values import Layout

TABLE = Path(__file__).resolve().parent / "data" / "cute_atoms_dsl.json"


def _offsets(text: str) -> list[int]:
    """A TV layout's offset at every (thread, value) index, thread fastest."""
    lay = read(text)
    assert isinstance(lay, Layout), text
    n = size(lay.shape)
    return np.asarray(evaluate(lay.shape, lay.stride, np.arange(n))).tolist()


def _same(ours: tuple, theirs: list[str]) -> None:
    for operand, mine, cute in zip("ABC", ours, theirs, strict=True):
        assert _offsets(mine) == _offsets(cute), (operand, mine, cute)


def test_every_dsl_atom_is_bankproofs_element_for_element(capsys):
    table = json.loads(TABLE.read_text())
    for name, layouts in table["atoms"].items():
        at = mma_atom(name)
        _same((at.a, at.b, at.c), layouts)
    with capsys.disabled():
        print(f"\nCuTe atom oracle ({table['dsl']}): {len(table['atoms'])} atoms equal, "
              f"{len(MMA_ATOMS)} names in bankproof's table")  # fmt: skip


@pytest.mark.skipif(importlib.util.find_spec("cutlass") is None, reason="the CuTe DSL is not installed")
def test_the_committed_table_is_what_the_dsl_says_now():
    from lab.cute_oracle import atoms, gmma_atoms, umma_atoms

    table = json.loads(TABLE.read_text())
    assert atoms() == {k: tuple(v) for k, v in table["atoms"].items()}
    assert gmma_atoms() == table["gmma_layout_atoms"]
    assert umma_atoms() == table["umma_layout_atoms"]


def test_gmma_layout_atoms_by_name_are_the_dsls():
    """``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` read by name: the same swizzle, shape
    and stride as the DSL's ``warpgroup.make_smem_layout_atom`` (which prints the element-unit
    layout; bankproof keeps CuTe's smem_ptr mark that the swizzle acts on byte addresses)."""
    from bankproof.models.notation.cute_expr import read
    from bankproof.models.notation.cute_values import Composed

    table = json.loads(TABLE.read_text())["gmma_layout_atoms"]
    assert len(table) == 24
    for name, dsl in table.items():
        ours = read(f"GMMA::{name}")
        assert isinstance(ours, Composed) and ours.ptr_bits in (8, 16, 32)
        b = ours.swizzle.b if ours.swizzle else 0
        shape, stride = dsl.split(" o ")[-1].split(":")
        assert dsl.startswith(f"S<{b},4,3> o "), (name, dsl)
        assert (str(ours.layout.shape).replace(" ", ""), str(ours.layout.stride).replace(" ", "")) == (
            shape,
            stride,
        )


def test_umma_layout_atoms_by_name_are_the_dsls():
    """``UMMA::Layout_*_Atom<T>`` read by name, the 32-byte-atom ``MN_SW128_32B`` included: the
    swizzle, shape and stride the DSL's ``tcgen05.make_smem_layout_atom`` prints."""
    from bankproof.models.notation.cute_expr import read
    from bankproof.models.notation.cute_values import Composed

    table = json.loads(TABLE.read_text())["umma_layout_atoms"]
    assert len(table) == 27
    for name, dsl in table.items():
        ours = read(f"UMMA::{name}")
        assert isinstance(ours, Composed) and ours.ptr_bits in (8, 16, 32)
        sw = ours.swizzle.text().replace("Sw<", "S<") if ours.swizzle else "S<0,4,3>"
        shape, stride = dsl.split(" o ")[-1].split(":")
        assert dsl.startswith(f"{sw} o "), (name, dsl)
        assert (str(ours.layout.shape).replace(" ", ""), str(ours.layout.stride).replace(" ", "")) == (
            shape,
            stride,
        )
