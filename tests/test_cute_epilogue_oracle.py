"""Epilogue subtile copies against the CuTe DSL: ``make_tiled_copy_S(atom, make_tiled_copy_C_atom(
atom, tiled_mma))`` partitioning a subtile of the accumulator tile (what CUTLASS's epilogues do).
The DSL's source TV layout and by-mode tiler (``tests/data/cute_atoms_dsl.json``, written by
``lab/cute_oracle.py``) give, for every thread and every copy-atom call, the coordinates its values
go to; bankproof's C fragment over the subtile must hold the same calls, value for value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_shapes import evaluate, leaves, size
from bankproof.models.notation.cute_tiled_mma import mma_fragment, tiled_mma

TABLE = Path(__file__).resolve().parent / "data" / "cute_atoms_dsl.json"
CASES = json.loads(TABLE.read_text())["epilogue_copies"]


def _bits(layout) -> list[int]:
    return [
        d << i for s, d in zip(leaves(layout.shape), leaves(layout.stride)) for i in range(s.bit_length() - 1)
    ]


def dsl_calls(case: dict, sub: tuple[int, int]) -> dict[int, set[tuple]]:
    """thread -> the set of its calls, each the tuple of its values' (m, n) (the DSL's)."""
    tv = read(case["tv"])
    tilers = [read(t) for t in case["tiler"]]
    sizes = [size(t.shape) for t in tilers]
    rests = []
    for t, s in zip(tilers, sub):  # CuTe's complement: the bits the tiler leaves, lowest first
        have = set(_bits(t))
        rests.append([1 << b for b in range(s.bit_length() - 1) if (1 << b) not in have])
    n_thr, n_val = (size(m) for m in tv.shape)
    out: dict[int, set[tuple]] = {}
    for th in range(n_thr):
        calls = set()
        for jm in range(1 << len(rests[0])):
            for jn in range(1 << len(rests[1])):
                off = [sum(b for k, b in enumerate(r) if j >> k & 1) for r, j in zip(rests, (jm, jn))]
                vals = []
                for v in range(n_val):
                    idx = evaluate(tv.shape[0], tv.stride[0], th) + evaluate(tv.shape[1], tv.stride[1], v)
                    i = (idx % sizes[0], idx // sizes[0])
                    vals.append(tuple(evaluate(t.shape, t.stride, x) + o for t, x, o in zip(tilers, i, off)))
                calls.add(tuple(vals))
        out[th] = calls
    return out


def bankproof_calls(case: dict, sub: tuple[int, int], n_val: int) -> dict[int, set[tuple]]:
    acc = mma_fragment(case["atom"], "C", list(sub), 16, case["warps"], case["copy"], "store")
    lay = acc.layout
    n_reg = lay.in_dim_size("register")
    out: dict[int, set[tuple]] = {}
    for th in range(32 * lay.in_dim_size("warp")):
        calls = set()
        for j in range(n_reg // n_val):
            vals = []
            for v in range(n_val):
                got = lay.apply(register=j * n_val + v, lane=th % 32, warp=th // 32)
                vals.append((got["dim0"], got["dim1"]))
            calls.add(tuple(vals))
        out[th] = calls
    return out


def _subtiles(case: dict) -> list[tuple[int, int]]:
    tilers = [read(t) for t in case["tiler"]]
    first = [1 << max(_bits(t) + [0]).bit_length() for t in tilers]  # the smallest power-of-two span
    full = list(tiled_mma(case["atom"], case["warps"]).tile[:2])
    out = {tuple(first), tuple(full)}
    if 2 * first[1] <= full[1]:
        out.add((first[0], 2 * first[1]))
    return sorted(out)


def test_the_table_has_the_epilogue_cases():
    assert len(CASES) == 21


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['atom']}-{c['warps']}-{c['copy']}")
def test_epilogue_subtile_copies_are_cutes(case):
    n_val = size(read(case["tv"]).shape[1])
    for sub in _subtiles(case):
        assert bankproof_calls(case, sub, n_val) == dsl_calls(case, sub), sub


def test_sm90_epilogue_subtile_example():
    """CUTLASS's sm90 epilogue as its source spells it: 64x32 EpilogueTile of a 64x256 GMMA tile,
    stmatrix.x4 into SW64: 8 instructions (1024 halfs / 128 per stmatrix.x4), conflict-free."""
    import bankproof as bp

    r = bp.verify(
        spec=Path(__file__).resolve().parents[1] / "examples" / "cute_sm90_epilogue_subtile_64x32.toml"
    )
    (a,) = r.accesses
    assert (a.instr, a.instructions, a.wavefronts, r.verdict) == (
        "stsm.x4", 8, 32, "proved")  # fmt: skip


def test_a_subtile_that_splits_a_copys_threads_is_refused():
    """A 16-row subtile of a warpgroup's 64 rows: warps 1-3 would write outside it."""
    from bankproof.models.errors import InputError

    with pytest.raises(InputError, match="splits one copy's threads: warp 0"):
        mma_fragment("SM90_64x64x16_F16F16F16_SS", "C", [16, 64], 16, "(1,1,1)", "SM90_U32x4_STSM_N", "store")
