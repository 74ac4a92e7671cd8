"""Forty public kernels nobody here wrote, measured on an H100 (issue 55): 23 of llm.c's CUDA
kernels compiled here by NVRTC and 17 numba-cuda kernels as numba's own compiler wrote their PTX
(examples/cuda/public/; gpu_checks/results/h100-2026-12-07-kernel-truth-public.json.gz, made by
lab/gpu/device_issue55.sh: the PTX built there by the device's ptxas, one CTA, Nsight Compute's
SASS-level counters and source view). Every number the analysis states equals the counters: each
kind's totals and each source line's; what it does not state says why."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from bankproof.gpu_checks.source_page import read_export
from bankproof.verifier.kernel.measured import join
from bankproof.verifier.kernel.totals import COUNTERS

from tests import kernel_cases as kc

pytestmark = [pytest.mark.gpu_replay, pytest.mark.slow]

RECORD = (
    Path(__file__).resolve().parent.parent
    / "gpu_checks"
    / "results"
    / "h100-2026-12-07-kernel-truth-public.json.gz"
)
RECORDED = json.loads(gzip.decompress(RECORD.read_bytes()))["cases"]


def _num(v) -> int:
    return int(float(str(v).replace(",", "")))


@pytest.fixture(scope="module")
def analysed():
    if not kc.have_nvrtc():
        pytest.skip("the llm.c kernels need NVRTC (the cuda extra)")
    return {r["name"]: kc.analyse_case(kc.case(r["name"], kc.PUBLIC), r["ptx_text"]) for r in RECORDED}


def test_the_record_is_the_public_corpus():
    assert not any(r.get("failed") for r in RECORDED) and len(RECORDED) == 40
    assert {r["name"] for r in RECORDED} == {c["name"] for c in kc.cases(kc.PUBLIC)}
    assert sum(r["name"].startswith("numba_") for r in RECORDED) >= 10  # a compiler other than NVRTC


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_every_stated_total_equals_the_counters(analysed, rec):
    r = analysed[rec["name"]]
    for t in r.totals:
        if t.kind not in COUNTERS:
            continue
        inst, wave = (rec["metrics"][m] for m in COUNTERS[t.kind])
        if t.instructions is not None:
            assert t.instructions == _num(inst), (t.kind, t.instructions, inst)
        if t.wavefronts is not None:
            assert t.wavefronts == _num(wave), (t.kind, t.wavefronts, wave)
        else:  # not stated: the kernel says why, line by line
            assert r.verdict in ("unknown", "refuted") and any(
                i.wavefronts is None and i.reason for i in r.instructions
            )
    for kind, (inst, _) in COUNTERS.items():  # nothing measured that the analysis did not see
        if kind not in {t.kind for t in r.totals}:
            assert _num(rec["metrics"][inst]) == 0, kind


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_every_stated_line_equals_the_view(analysed, rec):
    """A line the analysis states agrees with the source view; a line it does not state is one whose
    instructions it names unknown with a reason (loaded data, a CAS loop's LDS at its atomic)."""
    r = analysed[rec["name"]]
    unknown_lines = {(i.inlined_from or i.location).line for i in r.instructions
                     if i.location is not None and i.wavefronts is None and i.reason}  # fmt: skip
    for m in join(r, read_export(rec["source_csv"])):
        if m.predicted_wavefronts is not None:
            assert m.agrees, m
        else:
            assert m.line in unknown_lines, m


def test_what_the_corpus_shows():
    """Most of the corpus is stated whole; the rest is unknown for reasons the analysis names."""
    verdicts = [kc.analyse_case(kc.case(r["name"], kc.PUBLIC), r["ptx_text"]).verdict for r in RECORDED[-17:]]
    assert verdicts.count("unknown") == 3 and len(verdicts) == 17  # numba: two atomics, the bitonic sort


NVCC_RECORD = RECORD.parent / "h100-2026-12-07-kernel-truth-nvcc.json.gz"
NVCC = json.loads(gzip.decompress(NVCC_RECORD.read_bytes()))["cases"]


@pytest.mark.parametrize("rec", NVCC, ids=[r["name"] for r in NVCC])
def test_nvccs_ptx_of_the_same_kernels_equals_the_counters(rec):
    """The llm.c kernels as nvcc 13.0.88 compiles them (another compiler's PTX): every stated total
    and line equals Nsight Compute's; what is not stated is unknown with a reason."""
    r = kc.analyse_case(kc.case(rec["name"], kc.PUBLIC / "nvcc"), rec["ptx_text"])
    for t in r.totals:
        if t.kind in COUNTERS:
            inst, wave = (rec["metrics"][m] for m in COUNTERS[t.kind])
            assert t.instructions is None or t.instructions == _num(inst), (t.kind, t.instructions, inst)
            assert t.wavefronts is None or t.wavefronts == _num(wave), (t.kind, t.wavefronts, wave)
    unknown_lines = {(i.inlined_from or i.location).line for i in r.instructions
                     if i.location is not None and i.wavefronts is None and i.reason}  # fmt: skip
    for m in join(r, read_export(rec["source_csv"])):
        assert m.agrees if m.predicted_wavefronts is not None else m.line in unknown_lines, m


def test_the_nvcc_record_is_whole():
    assert len(NVCC) == 14 and not any(r.get("failed") for r in NVCC)
    assert {r["name"] for r in NVCC} == {c["name"] for c in kc.cases(kc.PUBLIC / "nvcc")}


def test_every_numba_line_is_a_line_of_the_python_source(analysed):
    """numba's PTX names its Python file (``lab/numba_kernels.py``): every line of every measured
    numba kernel's account is a code line of that file, inside a kernel's ``def`` (numba's line
    table gives a shared array's first store the line declaring it, in the bitonic sort)."""
    source = (kc.EXAMPLES.parent.parent / "lab" / "numba_kernels.py").read_text().splitlines()
    checked = 0
    for name, r in analysed.items():
        if not name.startswith("numba_"):
            continue
        for ln in r.lines:
            assert ln.location is not None and ln.location.file == "lab/numba_kernels.py", (name, ln)
            text = source[ln.location.line - 1]
            assert text.startswith("    ") and not text.strip().startswith("#"), (name, ln.location.line)
            checked += 1
    assert checked >= 17
