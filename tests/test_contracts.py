"""The algebra's contracts (``Requires:``/``Postcondition:`` on every operation of
``models/layout_algebra.py`` and ``models/memory.py``, as Triton's ``LinearLayout.h`` states them):
each is written down, and each postcondition holds on random layouts."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import layout_from_offsets, memory_from_offsets
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import distributed, memory, shapes
from tests.test_package import ROOT

CONTRACTED = {
    "models/layout_algebra.py": ("product", "compose", "invert", "invert_and_compose", "divide_left"),
    "models/memory.py": (
        "memory_from_offsets",
        "padded_from_offsets",
        "layout_from_offsets",
        "inverse_columns",
    ),
}


def uncontracted(source: str, names: tuple[str, ...]) -> list[str]:
    """The functions of ``names`` in ``source`` whose docstring lacks ``Requires:`` or ``Postcondition:``."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            doc = ast.get_docstring(node) or ""
            found[node.name] = "Requires:" in doc and "Postcondition:" in doc
    return sorted(n for n in names if not found.get(n))


def test_every_algebra_operation_states_its_contract():
    for path, names in CONTRACTED.items():
        assert not uncontracted((ROOT / path).read_text(encoding="utf-8"), names), path


def test_the_contract_test_sees_a_missing_one():
    src = 'def compose(a, b):\n    """Composition.\n\n    Requires: matching dims.\n    """\n'
    assert uncontracted(src, ("compose",)) == ["compose"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_compose_invert_and_divide_keep_their_postconditions(data):
    shape = data.draw(shapes(5, 10))
    mem = data.draw(memory(shape))
    dist = data.draw(distributed(shape))
    inv = mem.invert()  # dims -> offset
    ident = mem.compose(inv)
    assert all(ident.apply(offset=1 << i)["offset"] == 1 << i for i in range(mem.in_bits))
    back = inv.compose(mem)
    for d, size in mem.out_dims:
        for i in range(size.bit_length() - 1):
            assert back.apply(**{d: 1 << i}) == {n: (1 << i if n == d else 0) for n, _ in mem.out_dims}
    through = dist.compose(inv)  # the access's offsets: outer(self(x)) for every input bit
    for d in dist.in_dim_names:
        for i in range(len(dist.in_bases(d))):
            x = {d: 1 << i}
            assert through.apply(**x) == inv.apply(**dist.apply(**x))
    reg = LinearLayout.identity1d(2, "register", "dim0")
    whole = reg.product(LinearLayout.identity1d(shape[0] // 2, "register", "dim0")) if shape[0] > 1 else None
    if whole is not None:
        assert whole.divide_left(reg) is not None and reg.product(whole.divide_left(reg)) == whole


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_invert_and_compose_maps_back_through_outer(data):
    shape = data.draw(shapes(5, 9))
    a = data.draw(memory(shape))
    b = data.draw(memory(shape))
    c = a.invert_and_compose(b)
    assert c.compose(b).transpose_outs(a.out_dim_names) == a


def test_offsets_read_back_to_the_same_offsets():
    rows, cols = np.meshgrid(np.arange(8), np.arange(16), indexing="ij")
    off = rows * 16 + (cols ^ rows)
    lay = layout_from_offsets(off, "t")
    for r in range(8):
        for c in range(16):
            assert lay.apply(offset=int(off[r, c])) == {"dim0": r, "dim1": c}
    padded = memory_from_offsets(rows * 20 + cols, "t")
    phys = padded.physical_offsets()
    assert (np.diff(phys) > 0).all() and int(phys[16]) == 20


def test_one_swizzle_diagram_and_every_swizzle_is_it():
    """The TMA modes, a kernel fix's remap and CuTe's notation are the XOR the one diagram pictures,
    and the modules that use it point to it."""
    import re

    from bankproof.models.engines.tma import MODES, swizzle
    from bankproof.models.swizzle import cute_swizzle
    from bankproof.verifier.kernel import fixes

    for mode in MODES.values():
        b, m, s = map(int, re.fullmatch(r"Sw<(\d+),(\d+),(\d+)>", mode.cute).groups())
        assert [swizzle(mode, x) for x in range(0, 8192, 16)] == [
            cute_swizzle(x, b, m, s) for x in range(0, 8192, 16)
        ]
    xs = np.arange(4096)[None]
    for b, m, s in [(3, 2, 5), (2, 4, 3), (1, 7, 1)]:
        assert fixes.swizzle(xs, b, m, s)[0].tolist() == [cute_swizzle(int(x), b, m, s) for x in xs[0]]
    for path in ("models/engines/tma.py", "verifier/kernel/fixes.py", "verifier/web/workbench.py"):
        assert "models.swizzle.SWIZZLE_DIAGRAM" in (ROOT / path).read_text(encoding="utf-8"), path


def test_one_check_every_door_reports():
    """``check()`` names every broken invariant; the constructor raises its first, the CLI exits 2
    with its text and the workbench answers 400 with it."""
    import json

    from bankproof.verifier.cli.main import main

    import bankproof

    good = LinearLayout.from_bases({"lane": [[1], [2]]}, {"dim0": 4})
    assert good.check() == []
    bad = LinearLayout((("lane", ((5,), (1, 0))),), (("dim0", 4), ("dim1", 3)))
    assert [e.problem for e in bad.check()] == ["size must be a power of two", "must have 2 coordinates"]
    try:
        LinearLayout.from_bases({"lane": [[5]]}, {"dim0": 4})
    except bankproof.InputError as e:
        said = str(e)
    assert said == str(LinearLayout((("lane", ((5,),)),), (("dim0", 4),)).check()[0])
    assert said == "layout: lane basis [5] coordinate for dim0 must be in [0, 4), got 5"
    assert main(["layout", json.dumps({"lane": [[5]]}), "--shape", "4"]) == 2
    from bankproof.verifier.web.workbench import SEED, evaluate

    memory = [[0, 1 << i] for i in range(5)] + [[1 << i, 0] for i in range(3)] + [[16, 0]]
    with pytest.raises(
        bankproof.InputError, match=r"offset basis \[16, 0\] coordinate for dim0 must be in \[0, 16\)"
    ):
        evaluate({**SEED, "memory": json.dumps(memory)})
