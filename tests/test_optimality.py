"""Optimality over every invertible linear layout (Z3): the §5.4 cost cannot be beaten, one less
than a reachable cost is refuted, and Z3's own synthesis agrees with enumeration."""

from __future__ import annotations

import json
from pathlib import Path

from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.layout import LinearLayout
from bankproof.proofs.optimality import MAX_BITS, prove_optimal, synthesize
from bankproof.verifier.cli import main
from bankproof.verifier.spec import load_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def seed_pair():
    spec = load_spec(EXAMPLES / "transpose_16x32_plain.toml")
    return spec.accesses[0].layout, spec.accesses[1].layout


def test_nothing_beats_the_synthesized_cost_and_the_bound_is_tight():
    a, b = seed_pair()
    assert prove_optimal(a, b, 32, 32, (16, 16), (1, 1)).status == "proved"
    assert prove_optimal(a, b, 32, 33, (16, 16), (1, 1)).status == "refuted"


def test_smt_synthesis_is_conflict_free_by_enumeration():
    a, b = seed_pair()
    out = synthesize(a, b, 32)
    assert out.status == "found" and out.layout.is_invertible()
    for dist, kind in ((a, "store"), (b, "load")):
        acc = build_access(dist, out.layout, 32, kind)
        counts, ideals, _ = evaluate(acc.instr, acc.addresses)
        assert (counts == ideals).all()


def test_beyond_the_size_limit_is_unknown():
    bits = MAX_BITS + 1
    rows = 1 << 7
    cols = 1 << (bits - 7)
    units = [[1 << i, 0] for i in range(7)] + [[0, 1 << i] for i in range(bits - 7)]
    lay = LinearLayout.from_bases(
        {"register": units[5:], "lane": units[:5], "warp": [], "block": []}, {"dim0": rows, "dim1": cols}
    )
    out = synthesize(lay, lay, 16)
    assert out.status == "unknown" and f"limited to {MAX_BITS}" in out.reason


def test_synth_reports_optimality(capsys):
    assert main(["synth", str(EXAMPLES / "transpose_16x32_plain.toml"), "--json"]) == 0
    opt = json.loads(capsys.readouterr().out)["synth"]["optimality"]
    assert opt["cost"] == 32 and opt["proof"]["status"] == "proved"
    assert opt["smt_synthesis"]["status"] == "found" and opt["smt_synthesis"]["agrees"]
