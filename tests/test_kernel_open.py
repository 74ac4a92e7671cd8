"""``bankproof kernel --open NAME=LO..HI[:STEP]``: a kernel argument left open over a range, every
value run. ``examples/cuda/runtime_pitch.cu`` reads a 32x32 tile's columns at a runtime pitch:
conflict-free for every odd pitch (a proof over the range), gcd(pitch, 32)-way otherwise (the
smallest counterexample with its lanes, the cost by residue class). Each class is what a run with
that value alone says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main

import bankproof

CU = str(Path(__file__).resolve().parent.parent / "examples" / "cuda" / "runtime_pitch.cu")
LAUNCH = {"block": "32x8", "dynamic_smem": 16384}


@pytest.fixture(scope="module")
def over_32_to_64():
    return bankproof.kernel_open(CU, "pitch=32..64", **LAUNCH)


@pytest.mark.compile
def test_a_column_read_at_a_runtime_pitch_by_residue_class(over_32_to_64):
    r = over_32_to_64
    store, load = r.instructions
    assert (r.verdict, r.exit_code, r.runs) == ("refuted", 1, 33)
    assert store.verdict == "proved" and [(c.values, c.wavefronts) for c in store.classes] == [
        ("every pitch in 32..64", 32)
    ]
    assert (load.verdict, load.smallest, load.conflict.lanes, load.conflict.wavefronts) == (
        "refuted",
        32,
        (0, 1),
        32,
    )
    assert [(c.values, c.wavefronts, c.verdict) for c in load.classes] == [
        ("pitch ≡ 0 (mod 32)", 1024, "refuted"),
        ("pitch ≡ 1 (mod 2)", 32, "proved"),
        ("pitch ≡ 2 (mod 4)", 64, "refuted"),
        ("pitch ≡ 4 (mod 8)", 128, "refuted"),
        ("pitch ≡ 8 (mod 16)", 256, "refuted"),
        ("pitch ≡ 16 (mod 32)", 512, "refuted"),
    ]


@pytest.mark.compile
@pytest.mark.parametrize("pitch, wavefronts", [(34, 64), (40, 256), (48, 512), (63, 32)])
def test_each_class_is_what_a_run_at_that_value_says(over_32_to_64, pitch, wavefronts):
    one = bankproof.kernel(CU, args={"pitch": pitch}, **LAUNCH)
    (load,) = [i for i in one.instructions if i.instr == "ld32"]
    assert load.wavefronts == wavefronts
    (cls,) = [c for c in over_32_to_64.instructions[1].classes if c.wavefronts == wavefronts]
    assert cls.verdict == load.verdict


def test_every_odd_pitch_is_proved_conflict_free(capsys):
    assert main(["kernel", CU, "--block", "32x8", "--dynamic-smem", "16384", "--open", "pitch=33..63:2"]) == 0
    out = capsys.readouterr().out
    assert "with pitch over 33..63 step 2 (16 values, one CTA run for each)" in out
    assert (
        "runtime_pitch.cu:14 ld32 (PTX line 82): conflict-free for every value (32 wavefronts, ideal 32)"
        in out
    )
    assert out.rstrip().endswith("verdict: proved (exit 0)")


def test_the_text_and_json_name_the_smallest_counterexample(capsys):
    argv = ["kernel", CU, "--block", "32x8", "--dynamic-smem", "16384", "--open", "pitch=36..40"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "conflicts; the smallest value that does: pitch=36" in out
    assert "there: warp 0, lanes 0 and 8 hit bank 0 at bytes 0 and 1152 (4 wavefronts, ideal 1)" in out
    assert main([*argv, "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["argument"] == {"name": "pitch", "lo": 36, "hi": 40, "step": 1}
    assert r["instructions"][1]["smallest"] == 36


def test_a_time_limit_leaves_it_unknown_never_proved():
    r = bankproof.kernel_open(CU, "pitch=33..63:2", time_limit=1e-9, **LAUNCH)
    assert r.verdict == "unknown" and r.exit_code == 3 and r.runs == 0
    assert r.unknown[0].startswith("stopped after 0 of 16 values")


@pytest.mark.parametrize(
    "argv, why",
    [(["--open", "pitch=64..32"], "needs LO <= HI"), (["--open", "pitch=1..5000"], "more than 1024 runs"),
     (["--open", "pitch"], "must be NAME=LO..HI"), (["--open", "width=1..4"], "names no parameter"),
     (["--open", "pitch=1..4", "--arg", "pitch=3"], "names an argument --arg also gives"),
     (["--open", "pitch=1..4", "--sarif"], "--sarif is not taken with --open")],
)  # fmt: skip
def test_bad_ranges_are_refused_naming_the_flag(argv, why, capsys):
    assert main(["kernel", CU, "--block", "32x8", "--dynamic-smem", "16384", *argv]) == 2
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err


def test_the_api_refuses_a_range_it_cannot_run():
    with pytest.raises(InputError, match="more than 1024 runs"):
        bankproof.kernel_open(CU, "pitch=0..2000", **LAUNCH)


@pytest.mark.gpu_replay
def test_every_pitch_measured_on_an_h200_is_its_class():
    """All 33 pitches launched on an H200 under Nsight Compute (``lab/gpu/open_truth.py``,
    ``gpu_checks/results/h200-2026-11-28-open-pitch.json.gz``): each one's SASS-level shared-load
    wavefronts are its class's, and its stores the 32 proved for every pitch."""
    import gzip

    from bankproof.gpu_checks.results import RESULTS

    record = json.loads(gzip.decompress((RESULTS / "h200-2026-11-28-open-pitch.json.gz").read_bytes()))
    assert record["gpu"].startswith("NVIDIA H200")
    measured = {}
    for case in record["cases"]:
        m = case["metrics"]
        ld = int(m["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"].replace(",", ""))
        st = int(m["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"].replace(",", ""))
        measured[case["params"][2]["value"]] = (st, ld)
    r = bankproof.kernel_open(CU, "pitch=32..64", **LAUNCH)
    store, load = r.instructions
    predicted = {x: (store.classes[0].wavefronts, c.wavefronts) for c in load.classes for x in c.members}
    assert predicted == measured and len(measured) == 33


@pytest.mark.parametrize("option, why", [({"max_steps": 0}, "max_steps must be"), ({"language": "rust"}, "language must be"),
                                         ({"args": {"nope": 1}}, "args names no parameter")])  # fmt: skip
def test_the_api_checks_every_option_as_kernel_does(option, why):
    """``kernel_open`` reads the kernel through the same checks as ``kernel`` (once it passed
    ``max_steps`` and the rest through unchecked)."""
    with pytest.raises(InputError, match=why):
        bankproof.kernel_open(CU, "pitch=33..35", **{**LAUNCH, **option})
