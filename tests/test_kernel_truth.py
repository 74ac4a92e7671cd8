"""GPU truth for ``bankproof kernel``: the CUDA examples measured on an H100 (records 1-3) and an
H200 (record 4) with Nsight Compute
(gpu_checks/results/h100-2026-11-28-kernel-truth.json.gz, made by lab/gpu/kernel_truth.py: the
PTX compiled here by NVRTC, built there by ptxas, launched once with the cases' arguments, the
SASS-level counters and the SourceCounters source view recorded). The analysis of each recorded
PTX must equal the counters on every modelled total and every source line the source view lists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from bankproof.gpu_checks.source_page import read_export, sass_class
from bankproof.verifier.kernel.reconcile import UNMODELLED
from bankproof.verifier.kernel.totals import COUNTERS, kind_of

from tests import kernel_cases as kc

pytestmark = pytest.mark.gpu_replay

RESULTS = Path(__file__).resolve().parent.parent / "gpu_checks" / "results"
RECORD = RESULTS / "h100-2026-11-28-kernel-truth.json.gz"  # 19 CUDA examples
RECORD_2 = RESULTS / "h100-2026-11-28-kernel-truth-2.json.gz"  # generic ld/st, a Triton PTX
RECORD_3 = (
    RESULTS / "h100-2026-11-28-kernel-truth-3.json.gz"
)  # a called device function, every ldsm/stsm shape
RECORD_4 = (
    RESULTS / "h200-2026-11-28-kernel-truth-4.json.gz"
)  # GPU Gems 3 scans, CUDA Samples convolution, nbody, CUDA by Example, Harris #5, a stencil, a runtime pitch
RECORD_5 = (
    RESULTS / "h200-2026-11-28-kernel-truth-5.json.gz"
)  # Rodinia lud, pathfinder, hotspot; two CUDA Samples
RECORDED = [
    c
    for r in (RECORD, RECORD_2, RECORD_3, RECORD_4, RECORD_5)
    for c in json.loads(gzip.decompress(r.read_bytes()))["cases"]
]


def _class(sass: str) -> str:
    """The source view's SASS class; generic LD/ST (global accesses are LDG/STG) reach shared memory in
    these kernels (the generic_shared cases)."""
    op = sass.split()[1] if sass.startswith("@") else sass.split()[0]
    return {"LD": "ld", "ST": "st"}.get(op.split(".")[0], sass_class(sass))


def _num(v) -> int:
    return int(float(str(v).replace(",", "")))


@pytest.fixture(scope="module")
def analysed():
    return {r["name"]: kc.analyse_case(kc.case(r["name"]), r["ptx_text"]) for r in RECORDED}


def test_record_covers_the_examples():
    assert len(RECORDED) >= 40
    assert not any(r.get("failed") for r in RECORDED)
    assert {r["name"] for r in RECORDED} == {c["name"] for c in kc.cases()}


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_totals_equal_the_counters(analysed, rec):
    r = analysed[rec["name"]]
    checked = 0
    for t in r.totals:
        if t.kind not in COUNTERS:
            continue
        inst, wave = (rec["metrics"][m] for m in COUNTERS[t.kind])
        assert t.instructions == _num(inst), (t.kind, t.instructions, inst)
        if t.wavefronts is not None:
            assert t.wavefronts == _num(wave), (t.kind, t.wavefronts, wave)
            checked += 1
        else:  # only what the model names as not modelled may be unknown; the rest is a lower bound
            mine = [i for i in r.instructions if kind_of(i.family, i.instr) == t.kind]
            assert all(
                i.rests_on in ("not modelled", UNMODELLED) or "not given: --buffer" in (i.reason or "")
                for i in mine
                if i.wavefronts is None
            )  # not modelled, or the launch's data (zeroed buffers on the device) not given
            assert sum(i.wavefronts for i in mine if i.wavefronts is not None) <= _num(wave)
    for kind, (inst, _) in COUNTERS.items():  # nothing measured that the analysis did not see
        if kind not in {t.kind for t in r.totals}:
            assert _num(rec["metrics"][inst]) == 0, kind
    assert checked >= 1


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_source_lines_equal_the_view(analysed, rec):
    """Per innermost source line and class of the source view (:mod:`bankproof.verifier.kernel.
    measured`): wavefronts equal, instructions executed between those with a lane on and those
    counting warps that branched around the line (the view counts them where ptxas predicated)."""
    from bankproof.verifier.kernel.measured import join

    lines = join(analysed[rec["name"]], read_export(rec["source_csv"]))
    assert lines and all(m.agrees for m in lines), [m for m in lines if not m.agrees]
    assert all(m.predicted_wavefronts is not None or m.kind == "atom" or rec["name"] == "triton_matmul_fp8"
               for m in lines)  # fmt: skip


def test_line_count():
    """The record's source views list at least 50 shared-memory lines in all."""
    total = 0
    for rec in RECORDED:
        seen = {(x.file, x.line, _class(x.sass)) for x in read_export(rec["source_csv"])
                if _class(x.sass) not in ("gmma", "other") and not x.sass.startswith("@!PT")}  # fmt: skip
        total += len(seen)
    assert total >= 50


def test_given_the_launchs_zeroed_buffers_the_histogram_is_exact(analysed):
    """The device launched the examples with zeroed buffers: given them, the shared histogram's
    increments (ATOMS.POPC.INC, every lane on bin 0: one word) are counted and equal the counters."""
    if not kc.have_nvrtc():
        pytest.skip("needs the cuda extra")
    (rec,) = [r for r in RECORDED if r["name"] == "histogram_shared"]
    r = kc.analyse_case(kc.case("histogram_shared"), rec.get("ptx_text"), data=True)
    (t,) = [t for t in r.totals if t.kind == "atomic"]
    inst, wave = (rec["metrics"][m] for m in COUNTERS["atomic"])
    assert (t.instructions, t.wavefronts) == (_num(inst), _num(wave)) == (128, 128)
