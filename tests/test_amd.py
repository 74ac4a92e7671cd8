"""AMD LDS models (gfx942, gfx950; published rules, status ``assumed (published)``): the rules'
lane groups as published, exact counts, the example specs, and the three engines (enumeration,
Lemma 9.4 over lane groups, Z3) agreeing on >= 1000 random wave64 layouts (count printed)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from bankproof.models import lds, target
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.engine.answer import answer
from bankproof.verifier.engine.check import problem_of
from bankproof.verifier.engine.spec import AccessSpec, Spec

import bankproof as bp

ROOT = Path(__file__).resolve().parents[1]


def members(r: lds.Rule, lane: int) -> list[int]:
    return sorted(np.flatnonzero(r.groups == r.groups[lane]).tolist())


def test_published_lane_groups():
    b128 = target.rule("gfx942", "ds_read_b128")
    assert [members(b128, lane) for lane in (0, 4, 8, 12)] == [
        [0, 1, 2, 3, 20, 21, 22, 23], [4, 5, 6, 7, 16, 17, 18, 19],
        [8, 9, 10, 11, 28, 29, 30, 31], [12, 13, 14, 15, 24, 25, 26, 27],
    ]  # fmt: skip
    assert members(b128, 32) == [32, 33, 34, 35, 52, 53, 54, 55]
    assert members(target.rule("gfx942", "ds_write_b128"), 9) == list(range(8, 16))
    assert members(target.rule("gfx942", "ds_read_b32"), 40) == list(range(32, 64))
    b64 = target.rule("gfx942", "ds_read_b64")  # Triton's wave64 reference: 32 banks / 2 words = 16 lanes
    assert [members(b64, lane) for lane in (0, 17, 63)] == [
        list(range(0, 16)),
        list(range(16, 32)),
        list(range(48, 64)),
    ]
    assert members(target.rule("gfx950", "ds_read_b32"), 5) == list(range(64))  # 64 banks / 1 word: one group
    g950 = target.rule("gfx950", "ds_read_b128")
    assert members(g950, 0) == [0, 1, 2, 3, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25, 26, 27]
    assert members(g950, 4) == [4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 28, 29, 30, 31]
    assert members(target.rule("gfx950", "ds_read_b64"), 33) == list(range(32, 64))
    assert members(target.rule("gfx950", "ds_write_b64"), 17) == list(range(16, 32))
    assert target.rule("gfx950", "ds_write_b128").groups is None  # nothing published
    for arch in ("gfx942", "gfx950"):
        for instr, _, _ in target.get(arch).rules:
            lds.group_subspace(target.rule(arch, instr))  # every published grouping is a coset structure
    assert lds.group_subspace(g950) == [1, 2, 12, 20]


@pytest.mark.parametrize(
    "arch, instr, addresses, count, ideal",
    [
        ("gfx942", "ds_read_b32", [4 * i for i in range(64)], 2, 2),  # two half waves, 32 banks each
        ("gfx942", "ds_read_b32", [128 * i for i in range(64)], 64, 2),  # 32 words in bank 0, per half
        ("gfx942", "ds_read_b32", [0] * 64, 2, 2),  # one word: broadcast
        ("gfx942", "ds_read_b128", [16 * i for i in range(64)], 8, 8),
        ("gfx942", "ds_read_b128", [128 * (i % 4) + 16 * (i // 4) for i in range(64)], 32, 8),
        ("gfx942", "ds_write_b128", [16 * i for i in range(64)], 8, 8),
        ("gfx950", "ds_read_b128", [16 * i for i in range(64)], 4, 4),
        ("gfx950", "ds_read_b64", [8 * i for i in range(64)], 2, 2),
        ("gfx942", "ds_read_b64", [8 * i for i in range(64)], 4, 4),  # 16 lanes x 2 words fill 32 banks
        ("gfx942", "ds_read_b64", [256 * i for i in range(64)], 64, 4),  # 16 lanes on banks 0-1, per group
        ("gfx950", "ds_read_b32", [4 * i for i in range(64)], 1, 1),  # 64 lanes, 64 banks
        (
            "gfx950",
            "ds_read_b32",
            [128 * i for i in range(64)],
            32,
            1,
        ),  # words 0, 32, 64...: 32 lanes per bank 0/32
        ("gfx950", "ds_write_b64", [256 * (i % 2) + 8 * (i // 2) for i in range(64)], 8, 4),
    ],
)
def test_counts(arch, instr, addresses, count, ideal):
    counts, ideals = lds.evaluate(target.rule(arch, instr), np.array([addresses]))
    assert (int(counts[0]), int(ideals[0])) == (count, ideal)


def test_example_spec_answers_assumed_published_with_its_rule():
    r = bp.verify(spec=str(ROOT / "examples" / "amd_mi300_gemm_a_swizzled.toml"))
    assert r.verdict == "proved" and r.arch == "gfx942"
    assert [(a.instr, a.wavefronts, a.rests_on) for a in r.accesses] == [
        ("ds_write_b128", 64, "assumed (published)"), ("ds_read_b128", 64, "assumed (published)")]  # fmt: skip
    assert "8 lane groups of 8" in r.access("read").rule and "ROCm blog" in r.access("read").rule
    plain = bp.verify(spec=str(ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"))
    assert [a.wavefronts for a in plain.accesses] == [64, 256] and plain.access("read").conflict.lanes == (
        0,
        1,
    )


def test_amd_refusals():
    with pytest.raises(InputError, match="lds: instr must be one of"):
        target.rule("gfx942", "ds_read_b256")
    with pytest.raises(InputError, match="has a 32-lane warp; gfx942 warps have 64 lanes"):
        bp.verify("32*m + n", load="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
                  "warpsPerCTA = [1, 1], order = [0, 1]}>", shape=(32, 32), dtype="f32", arch="gfx942")  # fmt: skip


# ----- the three engines on random layouts -------------------------------------------------------
def _random_case(rng: random.Random):
    """A random invertible memory layout and a wave64 access whose vector is the memory's first
    offset bits (so a wide ds_read/ds_write is legal), on a 2-D tensor."""
    elem = rng.choice([16, 32])
    vec_bits = rng.choice([0, 1, 2, 3] if elem == 16 else [0, 1, 2])
    extra = rng.randint(0, 4)
    n = 6 + vec_bits + extra
    rows_bits = rng.randint(1, n - 1)
    shape = [1 << rows_bits, 1 << (n - rows_bits)]
    cols = [1 << k for k in range(n)]  # offset bit k -> packed tensor vector (row-major: dim1 low)
    rng.shuffle(cols)
    for _ in range(rng.randint(0, 2 * n)):  # swizzle-like: XOR lower columns into higher ones
        i, j = sorted(rng.sample(range(n), 2))
        cols[j] ^= cols[i]

    def coords(v: int) -> list[int]:
        return [v >> (n - rows_bits), v & ((1 << (n - rows_bits)) - 1)]

    memory = LinearLayout.from_bases(
        {"offset": [coords(c) for c in cols]}, {"dim0": shape[0], "dim1": shape[1]}
    )
    rest = cols[vec_bits:]
    if (
        rng.random() < 0.6
    ):  # lanes on random bits; else on the lowest offset bits (the banks): conflict-free-ish
        rng.shuffle(rest)
    lanes, others = rest[:6], rest[6:]
    for k in range(len(lanes)):
        if rng.random() < 0.3:  # lanes that are combinations (still independent)
            lanes[k] ^= rng.choice(cols[:vec_bits] + others) if cols[:vec_bits] + others else 0
    warps = others[: rng.randint(0, len(others))]
    regs = cols[:vec_bits] + others[len(warps) :]
    dist = LinearLayout.from_bases(
        {"register": [coords(v) for v in regs], "lane": [coords(v) for v in lanes],
         "warp": [coords(v) for v in warps]}, {"dim0": shape[0], "dim1": shape[1]})  # fmt: skip
    return memory, dist, shape, elem


@pytest.mark.slow
def test_three_engines_agree_on_random_amd_layouts(capsys):
    rng = random.Random(20261123)
    counts: Counter = Counter()
    disagreements = []
    while counts["compared"] < 1000:
        memory, dist, shape, elem = _random_case(rng)
        arch = rng.choice(["gfx942", "gfx950"])
        kind = rng.choice(["load", "store"])
        spec = Spec("<random>", shape, "f16" if elem == 16 else "f32", elem, arch, ["m", "n"], memory, "bases",
                    "", [AccessSpec("a", kind, "auto", dist, "")])  # fmt: skip
        try:
            r = answer(problem_of(spec, spec.accesses[0]), timeout_s=2)
        except InputError:
            counts["sub-dword (not modeled)"] += 1
            continue
        if r.engines["enumeration"].verdict == "unknown":
            counts["unpublished rule"] += 1
            continue
        e, a, z = (r.engines[k] for k in ("enumeration", "algebra", "z3"))
        same = (
            r.proof.status != "disagree"
            and a.verdict == e.verdict == z.verdict
            and a.wavefronts == e.wavefronts
            and (z.wavefronts is None or z.wavefronts == e.wavefronts)
        )
        counts["z3 certified"] += z.wavefronts is not None
        counts["compared"] += 1
        counts[r.proof.status] += 1
        if not same:
            disagreements.append((arch, kind, r.instr, e, a, z))
    with capsys.disabled():
        print(f"\nAMD engines on random wave64 layouts: {dict(counts)}, disagreements: {len(disagreements)}")
    assert counts["refuted"] > 100 and counts["proved"] > 100
    assert not disagreements, disagreements[:3]


def test_amd_archs_only_where_modeled(capsys):
    from bankproof.verifier.cli.main import main

    spec = str(ROOT / "examples" / "amd_mi300_gemm_a_plain.toml")
    assert bp.show(spec=spec).model == "lane groups"  # show and convert take AMD archs too
    why = "is an AMD model: only verify, layout, wavefronts, synth, explain, show and convert"
    assert why in target.get("gfx942").refuse("gpu", "gpu").problem
    r = bp.synth(spec=spec)  # the construction over the lane groups: both sides at their ideal
    assert r.verdict == "proved" and [(a.instr, a.wavefronts) for a in r.accesses] == [
        ("ds_write_b128", 64), ("ds_read_b128", 64)]  # fmt: skip
    assert r.synth.universal_bound == 128 == sum(a.wavefronts for a in r.accesses)  # 2 x 8 KiB / 128 B
    assert r.synth.optimal_over == (
        "every memory layout and instruction choice (proved: bytes moved / 128 per cycle is met)"
    )
    assert bp.explain(spec=spec).conflict_free
    assert main(["gpu", spec]) == 2
    assert main(["verify", spec]) == 1
    out = capsys.readouterr().out
    assert "model: assumed (published): ds_read_b128 on gfx942 (32 banks): 8 lane groups of 8" in out
    from bankproof.verifier.api.wavefronts import run_lines

    line = next(x for x in out.splitlines() if "reproduce:" in x).split("echo '")[1].split("'")[0]
    (r,) = run_lines([line])
    assert (r.wavefronts, r.ideal) == (32, 8)  # the counterexample's instruction replays


def test_wavefronts_lines_may_name_an_amd_arch():
    from bankproof.verifier.api.wavefronts import run_lines

    line = json.dumps(
        {"arch": "gfx950", "instr": "ds_read_b128", "byte_offsets": [16 * i for i in range(64)]}
    )
    (r,) = run_lines([line])
    assert (r.wavefronts, r.ideal, r.rests_on, len(r.groups)) == (4, 4, "assumed (published)", 4)
    (r,) = run_lines([json.dumps({"arch": "sm80", "instr": "ld128", "byte_offsets": [0] * 32})])
    assert (r.wavefronts, r.rests_on) == (None, "unknown")  # any line may name its arch: sm80's rules here
    with pytest.raises(InputError, match="line 1: arch must be one of sm80, sm90, sm100, gfx942, gfx950"):
        run_lines([json.dumps({"arch": "sm70", "instr": "ld32", "byte_offsets": [0] * 32})])
    with pytest.raises(InputError, match="line 1: byte_offsets must be a list of 64"):
        run_lines(['{"arch": "gfx942", "instr": "ds_read_b32", "byte_offsets": [0]}'])


def test_an_engine_saying_disagree_makes_the_access_disagree():
    """The AMD path once dropped a Z3 certificate's ``disagree`` when the other engines agreed."""
    from bankproof.verifier.engine.answer import agree
    from bankproof.verifier.results import EngineResult

    results = {"enumeration": EngineResult(256, "refuted"), "algebra": EngineResult(256, "refuted"),
               "z3": EngineResult(None, "disagree")}  # fmt: skip
    assert agree(results) == ("disagree", 256)
    assert agree({"enumeration": EngineResult(64, "proved"), "z3": EngineResult(None, "proved")}) == (
        "proved",
        64,
    )
    assert agree({"enumeration": EngineResult(64, "proved"), "algebra": EngineResult(128, "proved")}) == (
        "disagree", None)  # fmt: skip
    assert agree({"z3": EngineResult(None, "unknown")}) == ("unknown", None)


def test_the_html_page_of_an_lds_target_draws_its_lane_groups(tmp_path, capsys):
    """The page draws each access's bank map over the lane groups (a regression: the page once
    crashed when the scope went through the target; then it said it had none)."""
    from bankproof.verifier.cli.main import main

    page = tmp_path / "r.html"
    spec = ROOT / "examples" / "amd_mi300_gemm_a_plain.toml"
    assert main(["verify", str(spec), "--html", str(page)]) == 1
    html = page.read_text()
    assert "No bank map" not in html
    r = bp.show(spec=spec, access="read", instruction=0)  # the counterexample's instruction
    cells = sum(len({w // 32 for ws in banks.values() for w in ws}) * 32 for banks in r.groups)
    assert html.count('class="scope"') >= cells
