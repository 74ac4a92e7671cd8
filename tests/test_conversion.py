"""Conversions: the warp-shuffle plan and the shared-memory round trip, proved by Z3; wrong plans
and wrong lowerings are refuted with counterexamples."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
from bankproof.models.conversion import Round, shuffle_plan
from bankproof.models.notation import parse_layout
from bankproof.proofs.conversion import shared_roundtrip, shuffle_plan_correct
from bankproof.verifier.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
S = [32, 32]
ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
COLS = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [0, 1]}>"


def pair():
    return parse_layout(ROWS, S).layout, parse_layout(COLS, S).layout


def simulate(plan, a, b):
    """Run the plan on data: A's register r of lane s holds A(r, s); return what B receives."""
    got = {}
    for rnd in plan.rounds:
        for t in range(32):
            s = rnd.src[t]
            got[(rnd.recv[t], t)] = tuple(a.apply(register=rnd.send[s], lane=s).values())
    return got


def test_plan_delivers_every_element():
    a, b = pair()
    plan = shuffle_plan(a, b, 16, ["m", "n"])
    got = simulate(plan, a, b)
    assert len(got) == b.in_dim_size("register") * 32
    for (reg, lane), coords in got.items():
        assert coords == tuple(b.apply(register=reg, lane=lane).values())
    assert shuffle_plan_correct(plan, a, b).status == "proved"


def test_injected_wrong_plan_is_refuted():
    a, b = pair()
    plan = shuffle_plan(a, b, 16)
    r0 = plan.rounds[0]
    src = list(r0.src)
    src[3], src[5] = src[5], src[3]
    bad = dataclasses.replace(plan, rounds=[Round(src, r0.send, r0.recv), *plan.rounds[1:]])
    proof = shuffle_plan_correct(bad, a, b)
    assert proof.status == "refuted" and proof.model["round"] == 0 and proof.model["lane"] in (3, 5)
    assert proof.model["receives"] != proof.model["expects"]
    dup = dataclasses.replace(plan, rounds=[plan.rounds[0], plan.rounds[0], *plan.rounds[2:]])
    assert shuffle_plan_correct(dup, a, b).status == "refuted"


def test_shared_roundtrip_and_a_wrong_lowering():
    a, b = pair()
    m = parse_layout("#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>", S).layout
    other = parse_layout(
        "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>", S
    ).layout
    assert shared_roundtrip(a, b, m).status == "proved"
    wrong = shared_roundtrip(a, b, m, other)
    assert wrong.status == "refuted" and wrong.model["expects"] != wrong.model["reads"]
    padded = parse_layout("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [32, 32]}>", S).layout
    assert shared_roundtrip(a, b, padded).status == "proved"


def test_convert_command(capsys):
    assert main(["convert", str(EXAMPLES / "convert_blocked_transpose.toml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shuffle"]["proof"]["status"] == "proved" and len(out["shuffle"]["rounds"]) == 32
    assert out["shared_memory"]["proof"]["status"] == "proved" and out["verdict"] == "proved"


def test_convert_between_warps_uses_shared_memory(tmp_path, capsys):
    spec = tmp_path / "w.toml"
    spec.write_text("""
shape = [64, 64]
dtype = "f16"
[[access]]
name = "a"
kind = "store"
layout.triton = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]}>"
[[access]]
name = "b"
kind = "load"
layout.triton = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [0, 1]}>"
""")
    assert main(["convert", str(spec), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shuffle"]["possible"] is False and "between warps" in out["shuffle"]["reason"]
    assert out["shared_memory"]["memory"] == "the synthesized" and out["verdict"] == "proved"
    assert np.isfinite(out["shared_memory"]["proof"]["seconds"])
