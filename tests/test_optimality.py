"""Optimality over every invertible linear layout and every instruction choice (Z3): the searched
cost cannot be beaten, one above it is reachable, the model's cost by enumeration equals the
encoding's, and the search equals Z3 on random pairs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bankproof.models.layout import LinearLayout
from bankproof.proofs.choices import MAX_BITS, prove_cheapest
from bankproof.verifier.api.spec_file import load_spec
from bankproof.verifier.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def seed_pair():
    spec = load_spec(EXAMPLES / "transpose_16x32_plain.toml")
    return spec.accesses[0].layout, spec.accesses[1].layout


@pytest.mark.slow
def test_nothing_beats_the_synthesized_cost_and_the_bound_is_tight():
    a, b = seed_pair()
    assert prove_cheapest(a, b, 32, ("store", "load"), 32, "sm90").status == "proved"
    above = prove_cheapest(a, b, 32, ("store", "load"), 33, "sm90")
    assert above.status == "refuted" and above.modeled == 32 and above.layout.is_invertible()


def test_a_fixed_instruction_narrows_the_choices():
    """Pinning 16-bit accesses on a 32-bit-vectorizable pair: 16-bit is not an option for 32-bit
    data at all, so the encoding has no option to compare and the proof says unknown, naming them
    (it is never 'proved' over nothing)."""
    a, b = seed_pair()
    r = prove_cheapest(a, b, 32, ("store", "load"), 32, "sm90", fixed=("st16", "ld16"))
    assert r.status == "unknown" and r.reason == "st16 and ld16: not in the Z3 encoding of options"


def test_beyond_the_size_limit_is_unknown():
    bits = MAX_BITS + 1
    units = [[1 << i, 0] for i in range(7)] + [[0, 1 << i] for i in range(bits - 7)]
    lay = LinearLayout.from_bases({"register": units[5:], "lane": units[:5], "warp": [], "block": []},
                                  {"dim0": 1 << 7, "dim1": 1 << (bits - 7)})  # fmt: skip
    out = prove_cheapest(lay, lay, 16, ("store", "load"), 10, "sm90")
    assert out.status == "unknown" and f"limited to {MAX_BITS}" in out.reason


def test_synth_reports_optimality(capsys):
    assert main(["synth", str(EXAMPLES / "transpose_16x32_plain.toml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["synth"]
    opt = out["optimality"]
    assert opt["cost"] == 32 and opt["proof"]["status"] == "proved"
    assert opt["smt_synthesis"]["status"] == "found" and opt["smt_synthesis"]["agrees"]
    assert opt["smt_synthesis"]["enumerated_cost"] == 32
    assert out["optimal_over"].startswith("every memory layout and instruction choice")


def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("vs", ROOT / "bench" / "synth_vs_z3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_search_equals_z3_on_1000_random_pairs(capsys):
    """1000 random writer/reader pairs (8/16/32/64-bit, 1-8 warps, both orders): the search's
    layout costs, enumerated, what the search says, and Z3 proves nothing (no invertible linear
    layout with any ld/st width or ldmatrix/stmatrix form) costs less. Counts printed."""
    mod = _bench()
    rng = random.Random(0)
    results = [mod.check_optimum(rng, ("i8", "f16", "f32", "f64")[i % 4]) for i in range(1000)]
    wrong = [r for r in results if r["proof"] != "proved" or r["enumerated"] != r["best"]]
    above = sum(r["best"] > r["bound"] for r in results)
    with capsys.disabled():
        print(
            f"\n1000 random pairs: search = Z3 optimum on {1000 - len(wrong)} ({above} above the bytes/128 "
            f"bound, decided by the solver), enumeration = search on all"
        )
    assert wrong == []
    assert above >= 100


def test_search_reaches_a_narrow_side_into_a_matrix_row():
    """A bug found by the 1000 pairs: a 32-bit store into the 16-byte rows an ldmatrix.x2.trans
    reads was constructed as if the writer moved the whole row (4 phases, its lanes there dropped),
    costing 6 where 4 exists; each side's phases now follow its own width."""
    from bankproof.verifier.api.problem import problem
    from bankproof.verifier.engine.choice import search

    w = {
        "lane": [[4, 0], [2, 0], [1, 0], [0, 1], [0, 8]],
        "warp": [],
        "register": [[0, 2], [0, 4]],
        "block": [],
    }
    r = {
        "lane": [[0, 4], [2, 0], [0, 2], [1, 0], [0, 8]],
        "warp": [],
        "register": [[4, 0], [0, 1]],
        "block": [],
    }
    best = search(problem(store=w, load=r, shape=[8, 16], dtype="f16", require_memory=False))[0]
    assert (best.wavefronts, best.instructions) == ((2, 2), ("st32", "ldsm.x2.trans"))
    assert prove_cheapest(LinearLayout.from_bases(w, {"dim0": 8, "dim1": 16}),
                          LinearLayout.from_bases(r, {"dim0": 8, "dim1": 16}), 16, ("store", "load"), 4,
                          "sm90").status == "proved"  # fmt: skip


@pytest.mark.slow
def test_search_equals_z3_on_random_pairs():
    """bench/synth_vs_z3.py's check on 40 random pairs (the bench runs 1000): Z3 proves nothing
    under the search's best and reaches it, its model enumerated at the encoded cost. Counts
    printed."""
    mod = _bench()
    rng = random.Random(7)
    results = [mod.check(rng, ("i8", "f16", "f32", "f64")[i % 4]) for i in range(40)]
    above = sum(r["best"] > r["bound"] for r in results)
    print(f"{len(results)} pairs, {above} above the bytes/128 bound: all proved and reached")
    assert all(r["proof"] == "proved" and r["above"] == "refuted" and r["agree"] for r in results)
    assert above >= 3  # the solver, not only the bound, decides some


def test_a_large_tiles_cross_check_is_time_boxed_and_never_a_verdict():
    """On a 256x256 tile the proof settles optimality in milliseconds; the SMT synthesis
    cross-check then gets 150 ms: found (and agreeing) or unknown for its time, never refuted."""
    from bankproof.verifier.engine import synthesis

    import bankproof

    rows = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"
    cols = "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 8], order = [0, 1]}>"
    r = bankproof.synth(store=rows, load=cols, shape=(256, 256), dtype="f16")
    opt = r.synth.optimality
    assert (r.verdict, opt.proof.status, [a.wavefronts for a in r.accesses]) == (
        "proved",
        "proved",
        [1024, 1024],
    )
    assert opt.smt_synthesis.status in ("found", "unknown")
    if opt.smt_synthesis.status == "unknown":
        assert opt.smt_synthesis.agrees is None and "timeout" in opt.smt_synthesis.reason
        assert opt.smt_synthesis.seconds <= synthesis.CROSS_CHECK_MS / 1000 + 0.5
    else:
        assert opt.smt_synthesis.agrees
