"""``verify_many`` gives exactly ``verify``'s enumeration counts on every layout: random invertible
memory layouts (bases) under random register layouts of 8- to 64-bit elements, loads and stores,
sm90 and sm80 (where paired wide loads are not measured, the general path answers), CuTe text
and padded layouts through the general path; bad input names its field."""

from __future__ import annotations

import random

import pytest
from bankproof.models import f2
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.api.many import verify_many

import bankproof


def _random_memory(rng: random.Random, shape: list[int]) -> LinearLayout:
    n = sum(s.bit_length() - 1 for s in shape)
    while True:
        cols = [rng.randrange(1, 1 << n) for _ in range(n)]
        if f2.rank(cols) == n:
            break
    names = [f"dim{i}" for i in range(len(shape))]
    coords = LinearLayout((), tuple(zip(names, shape)))
    return LinearLayout.from_bases({"offset": [list(coords.unpack_dim0_lowest(c)) for c in cols]},
                                   dict(zip(names, shape)))  # fmt: skip


def _blocked(rng: random.Random, warps: int) -> str:
    spt = [1, rng.choice([1, 2, 4, 8])]
    tpw = rng.choice([[8, 4], [4, 8], [32, 1], [1, 32], [16, 2]])
    wpc = rng.choice([[warps, 1], [1, warps]])
    order = rng.choice([[1, 0], [0, 1]])
    return f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, order = {order}}}>"


@pytest.mark.parametrize("seed", range(12))
def test_many_equals_verify_on_random_layouts(seed):
    rng = random.Random(seed)
    shape = rng.choice([[64, 32], [32, 64], [16, 128], [128, 16]])
    dtype = rng.choice(["i8", "f16", "f32", "f64"])
    arch = rng.choice(["sm90", "sm90", "sm80"])
    store, load = _blocked(rng, 4), _blocked(rng, 4)
    mems = [_random_memory(rng, shape) for _ in range(25)]
    got = verify_many(mems, store=store, load=load, shape=shape, dtype=dtype, arch=arch)
    assert len(got.layouts) == len(mems)
    for mem, counts in zip(mems, got.layouts, strict=True):
        r = bankproof.verify(mem, store=store, load=load, shape=shape, dtype=dtype, arch=arch, engines="enum")
        want = [(a.name, a.instr, a.instructions, a.wavefronts, a.ideal) for a in r.accesses]
        assert [(c.name, c.instr, c.instructions, c.wavefronts, c.ideal) for c in counts] == want


def test_text_and_padded_layouts_take_the_general_path():
    rows = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    mems = ["Swizzle<3,3,3> o (64,32):(32,1)", "(64,32):(40,1)", "(64,32):(32,1)"]
    got = verify_many(mems, load=rows, shape=(64, 32), dtype="f16")
    for m, counts in zip(mems, got.layouts, strict=True):
        r = bankproof.verify(m, load=rows, shape=(64, 32), dtype="f16", engines="enum")
        assert [c.wavefronts for c in counts] == [a.wavefronts for a in r.accesses]
    assert [c[0].wavefronts for c in got.layouts] == [32, 64, 32]


@pytest.mark.parametrize(
    "memories, message",
    [
        ([], "verify_many: memories must be a non-empty list"),
        ("32*m + n", "verify_many: memories must be a non-empty list"),
        (["32*m + n", "32*m + (n"], r"verify_many: memories\[1\]"),
        (["32*m + n", {"offset": [[0, 1]]}], r"verify_many: memories\[1\]"),
    ],
)
def test_bad_input_names_the_field(memories, message):
    rows = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    with pytest.raises(InputError, match=message):
        verify_many(memories, load=rows, shape=(64, 32), dtype="f16")


def test_repeated_registers_and_broadcast_lanes_equal_verify():
    """A register layout whose registers repeat elements (and lanes that share them) goes the
    general way or the fast one, with verify's counts either way."""
    rng = random.Random(11)
    rep = {"register": [[0, 1], [0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [0, 0], [1, 0], [2, 0]],
           "warp": [[4, 0], [8, 0]]}  # fmt: skip
    bcast = {
        "register": [[0, 1], [0, 2]],
        "lane": [[0, 4], [0, 8], [0, 0], [1, 0], [2, 0]],
        "warp": [[4, 0], [0, 0]],
    }
    for dist in (rep, bcast):
        mems = [_random_memory(rng, [16, 16]) for _ in range(10)]
        got = verify_many(mems, load=dist, shape=(16, 16), dtype="f16")
        for mem, counts in zip(mems, got.layouts, strict=True):
            r = bankproof.verify(mem, load=dist, shape=(16, 16), dtype="f16", engines="enum")
            assert [(c.wavefronts, c.ideal, c.instructions) for c in counts] == [
                (a.wavefronts, a.ideal, a.instructions) for a in r.accesses
            ]
