"""Z3 engine: the encoding equals the hardware model, proofs agree with enumeration, timeouts
are unknown, and a wrong encoding is caught as a disagreement (exit 4)."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import z3
from bankproof.gpu_checks.results import single_instruction_runs
from bankproof.models.hardware import LANES, all_instructions, evaluate, instruction
from bankproof.proofs import encode
from bankproof.verifier.cli.main import main
from bankproof.verifier.engine.answer import answer
from bankproof.verifier.engine.check import problem_of
from bankproof.verifier.engine.spec import AccessSpec, Spec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import distributed, memory, shapes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


_PRIMS: dict[tuple[int, int], tuple[int, int]] = {}


def z3_count(ins, offsets, mask) -> int:
    """Wavefronts of one instruction computed from the encoding's primitives alone (each
    primitive evaluated by Z3 once per request width and address)."""
    addrs = [z3.BitVecVal(int(o), encode.ADDR) for o in offsets]
    active = [z3.BoolVal(bool((mask >> i) & 1)) for i in range(LANES)]
    if ins.is_matrix:
        active = [z3.BoolVal(i < ins.address_lanes) for i in range(LANES)]
    paired = z3.is_true(z3.simplify(encode.paired_term(ins, addrs, active)))
    shift = encode.phase_shift(ins, paired)
    width = encode.lane_width(ins)
    groups: dict[tuple[int, int], set[int]] = defaultdict(set)
    for lane in range(LANES):
        if not z3.is_true(active[lane]):
            continue
        key = (width, int(offsets[lane]))
        if key not in _PRIMS:
            a = addrs[lane]
            _PRIMS[key] = (
                z3.simplify(encode.bank_block(ins, a)).as_long(),
                z3.simplify(encode.word(ins, a)).as_long(),
            )
        block, word = _PRIMS[key]
        groups[(lane >> shift, block)].add(word)
    per_phase: dict[int, int] = defaultdict(int)
    for (p, _), words in groups.items():
        per_phase[p] = max(per_phase[p], len(words))
    return sum(per_phase.values())


def instructions_to_check(n_random: int = 2000) -> list[tuple]:
    out = []
    for run in single_instruction_runs():
        for m in run["measurements"]:
            out.append((instruction(m["instr"]), m["byte_offsets"], m["mask"]))
    rng = random.Random(5)
    kinds = all_instructions()
    for _ in range(n_random):
        ins = rng.choice(kinds)
        align = 16 if ins.is_matrix else ins.width
        window = rng.choice([128, 512, 4096])
        offs = [rng.randrange(window // align) * align for _ in range(LANES)]
        if rng.random() < 0.4:  # broadcast pairs
            x = rng.choice([1, 2, 4, 16])
            offs = [offs[min(i, i ^ x)] for i in range(LANES)]
        mask = (1 << 32) - 1 if ins.is_matrix or rng.random() < 0.6 else rng.getrandbits(32) or 1
        out.append((ins, offs, mask))
    return out


@pytest.mark.slow
def test_encoding_equals_rests_on(capsys):
    cases = instructions_to_check()
    mismatches = 0
    for ins, offs, mask in cases:
        act = np.array([(mask >> i) & 1 for i in range(LANES)], dtype=bool)
        want = int(evaluate(ins, np.array([offs]), act[None])[0][0])
        mismatches += z3_count(ins, offs, mask) != want
    with capsys.disabled():
        print(f"\nZ3 encoding vs hardware model: {len(cases)} instructions, {mismatches} mismatches")
    assert len(cases) >= 5000 and mismatches == 0


def test_acceptance_z3_refutes_xor_m_along_m0_n0(capsys):
    assert main(["verify", str(EXAMPLES / "transpose_16x32_xor_m.toml"), "--engine", "z3", "--json"]) == 1
    read = json.loads(capsys.readouterr().out)["accesses"][1]
    assert read["proof"]["engine"] == "z3" and read["proof"]["status"] == "refuted"
    a, b = read["conflict"]["coords"]
    assert (a["m"] ^ b["m"], a["n"] ^ b["n"]) == (1, 1)
    assert main(["verify", str(EXAMPLES / "transpose_16x32_xor_2m.toml"), "--engine", "z3"]) == 0


def test_exact_count_certificates(capsys):
    assert main(["verify", str(EXAMPLES / "transpose_16x32_plain.toml"), "--json"]) == 1
    read = json.loads(capsys.readouterr().out)["accesses"][1]
    cert = read["engines"]["z3"]["certificate"]
    assert cert["status"] == "proved" and cert["words_per_bank"] == 16 and len(cert["witness_lanes"]) == 16
    assert read["engines"]["z3"]["wavefronts"] == read["engines"]["enumeration"]["wavefronts"] == 256


BIG = """
shape = [128, 128]
dtype = "f16"
[memory]
triton = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
[[access]]
name = "read"
kind = "load"
layout.triton = "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>, kWidth = 2}>"
"""


def test_timeout_is_unknown_never_proved(tmp_path, capsys):
    spec = tmp_path / "big.toml"
    spec.write_text(BIG)
    assert main(["verify", str(spec), "--engine", "z3", "--timeout", "0.001", "--json"]) == 3
    read = json.loads(capsys.readouterr().out)["accesses"][0]
    assert read["proof"]["status"] == "unknown" and "timeout" in read["proof"]["reason"]
    assert read["conflict_free"] is None


def test_wrong_encoding_is_a_disagreement(monkeypatch, capsys):
    """Inject a bug into the Z3 hardware rules: the engines disagree and the tool exits 4."""
    monkeypatch.setattr(encode, "bank_block", lambda ins, addr: z3.URem(z3.UDiv(addr, 4), 16))
    monkeypatch.setattr("bankproof.proofs.conflicts.bank_block", encode.bank_block)
    assert main(["verify", str(EXAMPLES / "transpose_16x32_xor_2m.toml")]) == 4
    out = capsys.readouterr().out
    assert "ENGINES DISAGREE" in out and "verdict: disagree (exit 4)" in out


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_engines_agree_on_random_layouts(data):
    shape = data.draw(shapes(5, 10))
    bits = data.draw(st.sampled_from([8, 16, 32, 64]))
    dist = data.draw(distributed(shape))
    mem = data.draw(memory(shape))
    kind = data.draw(st.sampled_from(["load", "store"]))
    spec = Spec("<random>", shape, f"i{bits}", bits, "sm90", ["m", "n"], mem, "bases", "", [])
    result = answer(problem_of(spec, AccessSpec("a", kind, "auto", dist, "")))
    engines = result.engines
    assert result.proof.status in ("proved", "refuted"), engines
    assert engines["z3"].verdict == engines["enumeration"].verdict
    assert engines["z3"].wavefronts == engines["enumeration"].wavefronts
    if engines["algebra"].verdict != "n/a":
        assert engines["algebra"].wavefronts == engines["enumeration"].wavefronts


@pytest.mark.slow
def test_engines_agree_on_ldmatrix_and_stmatrix_accesses():
    """Every ldmatrix/stmatrix case of the GPU plan (conflicting ones too): Z3 = enumeration."""
    from bankproof.gpu_checks.layout_cases import matrix_cases
    from bankproof.models.layout import LinearLayout

    refuted = 0
    for case in matrix_cases()[::3]:
        dims = {f"dim{i}": s for i, s in enumerate(case["shape"])}
        mem = LinearLayout.from_bases({"offset": case["memory"]["offset"]}, dims)
        spec = Spec("<matrix>", case["shape"], "f16", 16, "sm90", ["m", "n"], mem, "bases", "", [])
        for side, kind in (("store", "store"), ("load", "load")):
            lay = LinearLayout.from_bases(case[f"{side}_layout"], dims)
            res = answer(problem_of(spec, AccessSpec(side, kind, case[side]["instr"], lay, "")))
            e, z = res.engines["enumeration"], res.engines["z3"]
            assert (e.verdict, e.wavefronts) == (z.verdict, z.wavefronts), case["id"]
            refuted += e.verdict == "refuted"
    assert refuted > 0
