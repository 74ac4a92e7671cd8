"""LinearLayout operations: exact worked examples and properties on random layouts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from hypothesis import given
from hypothesis import strategies as st

import bankproof


@st.composite
def layouts(draw, in_dims=("register", "lane", "warp"), out_bits=(1, 4), max_in=4, surjective=False):
    """Random layouts onto dim0 x dim1; bases are arbitrary coordinates (any F2 map)."""
    b0 = draw(st.integers(*out_bits))
    b1 = draw(st.integers(*out_bits))
    out = {"dim0": 1 << b0, "dim1": 1 << b1}
    bases = {}
    for d in in_dims:
        n = draw(st.integers(0, max_in))
        bases[d] = [
            [draw(st.integers(0, out["dim0"] - 1)), draw(st.integers(0, out["dim1"] - 1))] for _ in range(n)
        ]
    if surjective:  # append unit vectors so every output is reached
        bases[in_dims[0]] += [[1 << i, 0] for i in range(b0)] + [[0, 1 << i] for i in range(b1)]
    return LinearLayout.from_bases(bases, out)


def brute_apply(L: LinearLayout, **x: int) -> tuple[int, ...]:
    acc = [0] * len(L.out_dims)
    for d, bs in L.bases:
        for i, b in enumerate(bs):
            if (x.get(d, 0) >> i) & 1:
                acc = [a ^ c for a, c in zip(acc, b)]
    return tuple(acc)


@given(layouts())
def test_apply_table_and_arrays_agree(L):
    table = L.table()
    pos = 0
    flat_dims = []
    for d, bs in L.bases:
        flat_dims.append((d, pos, len(bs)))
        pos += len(bs)
    for flat in range(0, len(table), max(1, len(table) // 64)):
        x = {d: (flat >> p) & ((1 << n) - 1) for d, p, n in flat_dims}
        assert tuple(table[flat]) == brute_apply(L, **x) == tuple(L.apply(**x).values())
        arr = L.apply_arrays(**{d: np.array([v]) for d, v in x.items()})
        assert tuple(int(a[0]) for a in arr.values()) == brute_apply(L, **x)


@given(layouts(in_dims=("lane",), max_in=5), st.data())
def test_compose_is_function_composition(A, data):
    # B: A's out dims -> offset, random
    B = LinearLayout.from_bases(
        {
            d: [[data.draw(st.integers(0, 63))] for _ in range(size.bit_length() - 1)]
            for d, size in A.out_dims
        },
        {"offset": 64},
    )
    C = A.compose(B)
    for x in range(A.in_dim_size("lane")):
        mid = A.apply(lane=x)
        assert C.apply(lane=x) == B.apply(**mid)


@given(layouts(surjective=True), st.data())
def test_invert_and_compose_is_a_right_inverse(B, data):
    # A maps into B's output space.
    bases = {
        d: [
            [
                data.draw(st.integers(0, B.out_dim_size("dim0") - 1)),
                data.draw(st.integers(0, B.out_dim_size("dim1") - 1)),
            ]
            for _ in range(data.draw(st.integers(0, 4)))
        ]
        for d in ("register", "lane")
    }
    A = LinearLayout.from_bases(bases, dict(B.out_dims))
    C = A.invert_and_compose(B)
    for d, bs in A.bases:
        for i, b in enumerate(bs):
            x = C.apply(**{d: 1 << i})
            assert tuple(B.apply(**x).values()) == tuple(b)


def test_invert_and_compose_identity_where_layouts_agree_and_smallest_preimage():
    A = LinearLayout.from_bases({"register": [[1]], "lane": [[2], [0]]}, {"dim0": 4})
    B = LinearLayout.from_bases({"register": [[1]], "lane": [[2], [0]], "warp": [[0]]}, {"dim0": 4})
    C = A.invert_and_compose(B)
    # lane bit 1 maps to 0 in both: the identity is kept rather than the smallest preimage (0).
    assert C.as_dict() == {"register": [[1, 0, 0]], "lane": [[0, 1, 0], [0, 2, 0]]}
    D = LinearLayout.from_bases({"lane": [[3]]}, {"dim0": 4})
    E = LinearLayout.from_bases({"register": [[1], [2], [3]]}, {"dim0": 4})
    assert D.invert_and_compose(E).as_dict() == {"lane": [[3]]}  # 0b011, not 0b100


@given(layouts(surjective=True))
def test_invert_roundtrip(L):
    if not L.is_invertible():
        with pytest.raises(InputError):
            L.invert()
        return
    inv = L.invert()
    for x in range(0, 1 << L.in_bits, max(1, (1 << L.in_bits) // 32)):
        flat = {}
        pos = 0
        for d, bs in L.bases:
            flat[d] = (x >> pos) & ((1 << len(bs)) - 1)
            pos += len(bs)
        back = inv.apply(**L.apply(**flat))
        assert back == {d: flat[d] for d in back}


@given(layouts(), layouts())
def test_divide_left_undoes_product(inner, outer):
    C = (inner * outer).divide_left(inner)
    assert C is not None
    assert C.as_dict() == outer.as_dict() and sorted(C.out_dims) == sorted(outer.out_dims)


@given(layouts())
def test_flatten_then_reshape_is_identity(L):
    flat = L.flatten_outs("x")
    back = flat.reshape_outs(list(L.out_dims))
    assert back.as_dict() == L.as_dict() and back.out_dims == L.out_dims


def test_reshape_row_major_matches_numpy():
    L = LinearLayout.identity1d(4, "offset", "dim0") * LinearLayout.identity1d(8, "offset", "dim1")
    L = L.transpose_outs(["dim0", "dim1"])  # offset bits: dim0 first (column-major buffer)
    R = L.reshape_row_major([2, 16])
    for x in range(32):
        d0, d1 = L.apply(offset=x).values()
        r = np.arange(32).reshape(4, 8)[d0, d1]
        assert tuple(R.apply(offset=x).values()) == divmod(int(r), 16)


def test_product_exact():
    a = LinearLayout.identity1d(2, "register", "dim1") * LinearLayout.identity1d(4, "lane", "dim1")
    b = a * LinearLayout.identity1d(2, "register", "dim0")
    assert b.as_dict() == {"register": [[1, 0], [0, 1]], "lane": [[2, 0], [4, 0]]}
    assert b.out_dims == (("dim1", 8), ("dim0", 2))
    c = a * LinearLayout.identity1d(2, "register", "dim1")
    assert c.in_bases("register") == ((1,), (8,))  # outer shifted past inner's extent


def test_paper_figure1_layout_A():
    """§4.1: 2x2 registers, 4x8 threads, 2x1 warps on 16x16; r1 of t9 is at (2, 3)."""
    from bankproof.models.notation.triton import parse_triton

    A = parse_triton(
        "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]}>"
    ).to_layout([16, 16])
    assert A.apply(register=0, lane=1) == {"dim0": 0, "dim1": 2}
    assert A.apply(register=1, lane=9) == {"dim0": 2, "dim1": 3}
    assert A.apply(register=0, lane=10) == {"dim0": 2, "dim1": 4}
    assert A.distributed_violations() == []
    assert A.contiguous_registers() == 2


def test_validity_checks_name_the_problem():
    bad = LinearLayout.from_bases({"lane": [[1, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    v = bad.distributed_violations()
    assert v == ["lane[0] = [1, 1] has more than one nonzero bit"]
    rep = LinearLayout.from_bases({"lane": [[1, 0], [1, 0], [0, 1]]}, {"dim0": 2, "dim1": 2})
    assert rep.distributed_violations() == ["lane[1] = [1, 0] repeats lane[0]"]
    mem = LinearLayout.from_bases({"offset": [[1, 1], [1, 1]]}, {"dim0": 2, "dim1": 2})
    assert mem.memory_violations()[0].startswith("not invertible")


def test_out_of_range_basis_is_an_input_error():
    with pytest.raises(InputError, match="coordinate for dim0 must be in \\[0, 4\\)"):
        LinearLayout.from_bases({"lane": [[4]]}, {"dim0": 4})


def test_a_cute_swizzle_printed_back_shorter_is_said_to_be_the_same_map(capsys):
    """``Sw<3,2,3>`` on an 8x8 tile acts only through its lowest mask bit: it prints back as
    ``Sw<1,2,3>`` with a note that the two are the same map there (checked, not assumed)."""
    from bankproof.verifier.cli.main import main

    r = bankproof.layout("Sw<3,2,3> o (8,8):(1,8)")
    assert r.notations["cute"] == "Sw<1,2,3> o (8,8):(1,8)"
    assert r.notes == (
        "Sw<3,2,3> o (8,8):(1,8) is printed back as Sw<1,2,3> o (8,8):(1,8): the same map on these 64 "
        "elements (checked element by element: swizzle bits above the layout's offsets never act)",
    )
    assert bankproof.layout("Sw<3,2,3> o (32,8):(1,32)").notes is None  # printed back as given
    assert main(["layout", "Sw<3,2,3> o (8,8):(1,8)"]) == 0
    assert "note:     Sw<3,2,3> o (8,8):(1,8) is printed back as Sw<1,2,3>" in capsys.readouterr().out


def test_the_cute_unit_trap_is_a_warning_of_layout_too():
    r = bankproof.layout("Sw<3,4,3> o (8,64):(64,1)", dtype="f16")
    assert r.warnings and r.warnings[0].startswith("Sw<3,4,3> matches the 16-byte pattern of SW128")
    assert "warnings" in json.loads(r.to_json())


def test_a_wide_bank_table_is_printed_in_blocks_of_16_columns(capsys):
    from bankproof.verifier.cli.main import main

    attr = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>"
    assert main(["layout", attr, "--shape", "16x32", "--dtype", "f32", "--banks"]) == 0
    out = capsys.readouterr().out.splitlines()
    table = out[out.index(next(x for x in out if x.startswith("banks ("))) + 1 :]
    assert table[0] == "columns c0-c15:" and "columns c16-c31:" in table
    assert max(map(len, table)) <= 110 and len(table) == 2 * (1 + 1 + 16)
    assert table[2].split() == ["r0"] + [f"B{b:02d}" for b in range(16)]  # row 0 of 32*m + (n ^ 2m)


def test_a_layouts_kept_hash_is_not_carried_to_another_process():
    """The hash is kept on the layout (the caches key on it) but a string's hash differs between
    processes, so a pickled layout (Ray ships them) recomputes it where it lands."""
    import os
    import pickle
    import subprocess
    import sys

    a = LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, {"m": 2, "n": 2})
    hash(a)
    assert "_hash" in a.__dict__ and "_hash" not in a.__getstate__()
    blob = pickle.dumps(a).hex()
    code = (
        "import pickle, sys; from bankproof.models.layout import LinearLayout\n"
        f"b = pickle.loads(bytes.fromhex('{blob}'))\n"
        "c = LinearLayout.from_bases({'offset': [[0, 1], [1, 0]]}, {'m': 2, 'n': 2})\n"
        "sys.exit(0 if hash(b) == hash(c) and {b: 1}[c] == 1 else 1)"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # this process's seed is random
    done = subprocess.run([sys.executable, "-c", code], env=env, check=False)
    assert done.returncode == 0
