"""An access held as bases (``models/access_linear.py``) is the access ``build_access`` enumerates:
on random distributed layouts (zero, repeated and broadcast bases; warps and CTA blocks) over random
invertible memory layouts, every dtype, loads and stores, ``auto``, ``vector[N]`` and named ld/st,
it picks the same instruction and vector, builds every instruction's lane addresses alike, and
rebuilds any one instruction in full (warp, register, block, coordinates, elements); where
``build_access`` refuses, it declines."""

from __future__ import annotations

import random

import numpy as np
import pytest
from bankproof.models import f2
from bankproof.models.access import build_access
from bankproof.models.access_linear import inverse_columns, linear_access
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import parse_layout

SHAPES = ([64, 32], [32, 64], [16, 128], [8, 8, 32])


def _coords(shape: list[int]) -> LinearLayout:
    return LinearLayout((), tuple((f"dim{i}", s) for i, s in enumerate(shape)))


def _memory(rng: random.Random, shape: list[int], structured: bool) -> LinearLayout:
    n = sum(s.bit_length() - 1 for s in shape)
    if structured:  # a permutation of the coordinate bits, swizzled: vectors are likely
        cols = [1 << i for i in range(n)]
        head = cols[:2]
        rng.shuffle(cols)
        cols = head + [c for c in cols if c not in head] if rng.random() < 0.5 else cols
        for i in range(3, n):
            if rng.random() < 0.3:
                cols[i] ^= cols[rng.randrange(0, i)]
    else:
        while True:
            cols = [rng.randrange(1, 1 << n) for _ in range(n)]
            if f2.rank(cols) == n:
                break
    c = _coords(shape)
    return LinearLayout.from_bases(
        {"offset": [list(c.unpack_dim0_lowest(x)) for x in cols]}, dict(c.out_dims)
    )


def _dist(rng: random.Random, shape: list[int], mem: LinearLayout, style: str = "plain") -> LinearLayout:
    """A random distributed layout; ``mma``/``trans``: a 16-bit mma fragment over ``mem`` (or its
    transpose), what ldmatrix (``.trans``) delivers when the other bits are 16-byte aligned."""
    n = sum(s.bit_length() - 1 for s in shape)
    c = _coords(shape)
    low = [mem.pack_dim0_lowest(b) for b in mem.in_bases("offset")]  # offsets 1, 2, 4, ...

    def pick() -> int:
        r = rng.random()
        return 0 if r < 0.08 else rng.choice(low[3:]) if r < 0.75 else rng.randrange(1, 1 << n)

    regs = [low[k] for k in range(rng.randint(0, 3))] + [pick() for _ in range(rng.randint(0, 3))]
    rng.shuffle(regs) if rng.random() < 0.3 else None
    lanes = [pick() for _ in range(5)]
    if style == "mma":
        regs = [low[0]] + [pick() for _ in range(rng.randint(1, 3))]
        lanes = [low[1], low[2]] + lanes[2:]
    elif style == "trans":
        regs = [pick() for _ in range(rng.randint(1, 3))]
        lanes = lanes[:2] + [low[0], low[1], low[2]]
    parts = {"register": regs, "lane": lanes, "warp": [pick() for _ in range(rng.randint(0, 2))],
             "block": [pick() for _ in range(rng.randint(0, 1))]}  # fmt: skip
    return LinearLayout.from_bases(
        {k: [list(c.unpack_dim0_lowest(x)) for x in v] for k, v in parts.items()}, dict(c.out_dims)
    )


INSTRS = ("auto", "auto", "vector", "vector64", "ld32", "ld64", "ld128", "st16", "st64", "st128", "ld8",
          "ldsm.x4", "ldsm.x2", "ldsm.x1", "ldsm.x4.trans", "ldsm.x2.trans")  # fmt: skip
MATRIX = {
    "mma": ("ldsm.x4", "ldsm.x2", "ldsm.x1"),
    "trans": ("ldsm.x4.trans", "ldsm.x2.trans", "ldsm.x1.trans"),
}


def _compare(seed: int) -> tuple[int, int]:
    """(accesses both built and found equal, how many of them ldmatrix/stmatrix) for one seed."""
    rng = random.Random(seed)
    agreed = matrix = 0
    for _ in range(40):
        shape = rng.choice(SHAPES)
        mem = _memory(rng, shape, rng.random() < 0.7)
        style = rng.choice(["plain", "plain", "plain", "mma", "trans"])
        dist = _dist(rng, shape, mem, style)
        bits, kind = rng.choice([8, 16, 32, 64]), rng.choice(["load", "store"])
        instr = rng.choice(INSTRS)
        if style != "plain" and rng.random() < 0.7:
            bits, instr = 16, rng.choice(MATRIX[style])
        if instr[:2] in ("ld", "st"):
            instr = ("ld" if kind == "load" else "st") + instr[2:]
        try:
            want = build_access(dist, mem, bits, kind, instr)
        except InputError:
            assert linear_access(dist, mem, bits, kind, instr) is None
            continue
        got = linear_access(dist, mem, bits, kind, instr)
        assert got is not None
        matrix += got.instr.is_matrix
        assert (got.instr, got.vector, got.instructions) == (want.instr, want.vector, len(want.addresses))
        assert np.array_equal(got.rows(0, got.instructions), want.addresses)
        for i in {0, got.instructions - 1, rng.randrange(got.instructions)}:
            one = got.instruction(i)
            for field in ("addresses", "warp", "register", "block", "coords", "elements"):
                assert np.array_equal(getattr(one, field)[0], getattr(want, field)[i]), (field, i)
        agreed += 1
    return agreed, matrix


@pytest.mark.parametrize("seed", range(40))
def test_bases_build_what_enumeration_builds(seed):
    assert _compare(seed)[0] >= 4  # the comparison ran on accesses both built


@pytest.mark.slow
def test_matrix_instructions_were_compared():
    assert sum(_compare(seed)[1] for seed in range(40)) >= 20


def test_padded_memory_is_left_to_enumeration():
    rows = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
    dist = parse_layout(rows, [8, 32]).layout
    mem = parse_layout("32*m + n", [8, 32]).layout
    assert linear_access(dist, mem, 16, "load", "ldsm.x4") is None  # 8 registers in a row: not fragments
    padded = parse_layout("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [8, 32]}>", [8, 32]).layout
    assert linear_access(dist, padded, 16, "load") is None
    a = linear_access(dist, mem, 16, "load")
    assert (a.instr.name, a.vector, a.instructions) == ("ld.shared.v4.b32", 8, 1)


def test_inverse_columns_invert_the_offsets():
    rng = random.Random(3)
    for shape in SHAPES:
        mem = _memory(rng, shape, False)
        inv = inverse_columns(mem)
        for k, b in enumerate(mem.in_bases("offset")):
            assert f2.apply(inv, mem.pack_dim0_lowest(b)) == 1 << k
    flat = LinearLayout.from_bases({"offset": [[1, 0], [1, 0]]}, {"dim0": 2, "dim1": 2})
    assert inverse_columns(flat) is None


def test_runs_of_many_instructions_build_alike():
    """Past 4096 instructions, runs are built as a span XOR a constant (aligned) or bit by bit
    (any other range): both equal the enumerated addresses of a 2^18-element access."""
    rng = random.Random(11)
    shape = [512, 512]
    mem = _memory(rng, shape, False)
    rows = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
    dist = parse_layout(rows, shape).layout
    want = build_access(dist, mem, 32, "load").addresses
    got = linear_access(dist, mem, 32, "load")
    assert got.instructions == len(want) == 8192
    for start, stop in ((0, 8192), (4096, 6144), (1024, 2048), (3, 4100), (8000, 8192)):
        assert np.array_equal(got.rows(start, stop), want[start:stop]), (start, stop)
