"""``verify`` on a linear memory layout answers from the bases (``models/access_linear.py``,
``models/tally.py``): every engine's answer, the verdict, the totals and the counterexample equal
what the enumerated tables give (the path every other layout takes), on random layouts of every
dtype, loads and stores, sm90 and sm80; instruction 0 stands for all in the algebra and Z3 runs;
and a layout of 2^30 elements answers from its bases."""

from __future__ import annotations

import dataclasses
import random

import pytest
from bankproof.models import tally
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.api.problem import Access
from bankproof.verifier.engine import answer as answer_module

import bankproof
from tests.test_access_linear import INSTRS, MATRIX, SHAPES, _dist, _memory

LOOSE = ("seconds", "witness_lanes")  # timings; a Z3 model may name other (equally valid) lanes on a rerun
MODEL_LANES = ("lanes", "coords", "byte_addresses", "bank", "phase", "reproduce", "supplied")


def _plain(x):
    """A result as plain data without its timings and Z3's choice of witness lanes."""
    if dataclasses.is_dataclass(x):
        return _plain(x.to_dict())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if k not in LOOSE}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _both(monkeypatch, **kw):
    """(from the bases, from the tables) for one verify call, or the error each raised."""

    def run():
        try:
            return _plain(bankproof.verify(**kw))
        except InputError as e:
            return str(e)

    got = run()
    with monkeypatch.context() as m:
        m.setattr(answer_module, "linear_access", lambda *a, **k: None)
        want = run()
    return got, want


@pytest.mark.slow
def test_bases_answer_what_tables_answer(monkeypatch):
    rng = random.Random(100)
    refuted = answered = matrix = 0
    for _ in range(400):
        shape = rng.choice(SHAPES)
        mem = _memory(rng, shape, rng.random() < 0.7)
        style = rng.choice(["plain", "plain", "mma", "trans"])
        dist = _dist(rng, shape, mem, style).with_in_bases("block", [])
        kind, instr = rng.choice(["load", "store"]), rng.choice(INSTRS)
        dtype = rng.choice(["i8", "f16", "f32", "f64"])
        if style != "plain":  # ldmatrix/stmatrix on the fragments they deliver
            dtype, instr = "f16", rng.choice(MATRIX[style])
        if instr[:2] in ("ld", "st"):
            instr = ("ld" if kind == "load" else "st") + instr[2:]
        engines = rng.choice(["all", "enum", "algebra", "z3", ["algebra", "z3"]])
        access = Access(kind, dist, name="a", instr=instr)
        got, want = _both(monkeypatch, memory=mem, accesses=[access], shape=shape, dtype=dtype,
                          arch=rng.choice(["sm90", "sm80"]), engines=engines)  # fmt: skip
        matrix += not isinstance(got, str) and got["accesses"][0]["instr"].startswith(("ldsm", "stsm"))
        if engines in ("z3", ["algebra", "z3"]) and not isinstance(got, str):  # Z3's pair, not enumeration's
            for r in (got, want):
                for k in MODEL_LANES:
                    (r["accesses"][0]["conflict"] or {}).pop(k, None)
        assert got == want
        answered += not isinstance(got, str)
        refuted += not isinstance(got, str) and got["verdict"] == "refuted"
    assert refuted >= 20 and answered >= 40 and matrix >= 5  # answers and counterexamples were compared


def test_instruction_zero_stands_for_all(monkeypatch):
    """The algebra and Z3 runs count one row; enumeration streams every row, equal totals."""
    rng = random.Random(7)
    for _ in range(60):
        shape = rng.choice(SHAPES)
        mem = _memory(rng, shape, True)
        dist = _dist(rng, shape, mem).with_in_bases("block", [])
        from bankproof.models.access_linear import linear_access

        a = linear_access(dist, mem, 16, "load")
        if a is None:
            continue
        one, every = tally.uniform("sm90", a), tally.streamed("sm90", a, batch=3)
        assert one[:3] == every[:3] and one.first == every.first and one.worst == every.worst
        assert (one.first_over is None) == (every.first_over is None)


def _row_major(side_bits: int, swizzled: bool) -> LinearLayout:
    """``bench/large_layouts.py``'s row-major f16 layout (or its swizzled form), the one it times."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "large_layouts.py"
    spec = importlib.util.spec_from_file_location("large_layouts", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.row_major(side_bits, swizzled)


ROWS = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"


@pytest.mark.parametrize("side_bits", [6, 15])
def test_a_2_to_the_30_layout_answers_from_its_bases(side_bits):
    """Rows 65,536 bytes apart put lanes 0 and 4 (rows 0 and 1 of one phase) on bank 0: 2 wavefronts
    a phase, 8 an instruction where 4 is ideal; the swizzle removes it. The
    enumeration engine says the same at 2^12; at 2^30 Z3 and the algebra answer from the bases."""
    side = 1 << side_bits
    engines = "all" if side_bits < 8 else ["algebra", "z3"]
    n = (side * side) >> 8  # 128-bit loads: 8 f16 a lane, 32 lanes an instruction
    plain = bankproof.verify(_row_major(side_bits, False), load=ROWS, shape=(side, side), dtype="f16",
                             engines=engines)  # fmt: skip
    a = plain.accesses[0]
    assert (plain.verdict, a.instr, a.instructions, a.wavefronts, a.ideal) == (
        "refuted", "ld128", n, 8 * n, 4 * n)  # fmt: skip
    cx = a.conflict
    assert (cx.lanes, cx.instruction, cx.bank, cx.coords) == (
        (0, 4),
        0,
        0,
        ({"m": 0, "n": 0}, {"m": 1, "n": 0}),
    )
    assert cx.byte_addresses == (0, 2 * side)
    swz = bankproof.verify(
        _row_major(side_bits, True), load=ROWS, shape=(side, side), dtype="f16", engines=engines
    )
    assert (swz.verdict, swz.accesses[0].wavefronts) == ("proved", 4 * n)


@pytest.mark.parametrize("seed", range(6))
def test_large_layouts_answer_or_refuse_quickly(seed):
    """Random layouts of 2^25 to 2^30 elements as bases or Triton text, every engine choice: each
    call answers (enumeration past 2^24 points says unknown, the others decide) or refuses with an
    InputError naming a field, within a few seconds and without tables."""
    import time

    rng = random.Random(seed)
    bits = rng.randint(25, 30)
    rows_bits = rng.randint(8, bits - 8)
    shape = (1 << rows_bits, 1 << (bits - rows_bits))
    mem = _memory(rng, list(shape), rng.random() < 0.8)
    load = ROWS if rng.random() < 0.5 else ROWS.replace("[1, 8]", "[1, 1]")
    memory = (
        mem
        if rng.random() < 0.7
        else "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    )
    engines = rng.choice(["all", ["algebra", "z3"], "algebra", "enum"])
    t = time.perf_counter()
    try:
        r = bankproof.verify(memory, load=load, store=load, shape=shape, dtype=rng.choice(["f16", "f32", "i8"]),
                             engines=engines)  # fmt: skip
    except InputError as e:
        assert e.field and e.where
    else:
        for a in r.accesses:
            if "enumeration" in a.engines:
                assert a.engines["enumeration"].verdict == "unknown"
            assert r.verdict in ("proved", "refuted", "unknown")
    assert time.perf_counter() - t < 10


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"memory": "m + 32768*n", "shape": (32768, 32768)},
            "shape: value has 2^30 elements, over the limit of 2^24",
        ),
        (
            {
                "memory": "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
                "shape": (65536, 32768),
            },
            "shape: value has 2^31 elements, over the limit of 2^30",
        ),  # fmt: skip
    ],
)
def test_sizes_past_each_limit_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message.replace("^", r"\^")):
        bankproof.verify(load=ROWS, dtype="f16", **kwargs)
