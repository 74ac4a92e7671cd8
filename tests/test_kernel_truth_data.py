"""Fifteen kernels whose loops, branches and shared-memory addresses follow the data their launch
loads (examples/cuda/data: vLLM's moe_align_block_size, CUB's block radix sort and histograms,
paged-KV, varlen, block-sparse, CSR, embedding-bag, segmented, ragged, grouped-GEMM patterns),
launched on an H100 with that data and measured with Nsight Compute's SASS-level counters
(gpu_checks/results/h100-2026-12-07-kernel-truth-data.json.gz, made by lab/gpu/device_issue57.sh).
With the launch's buffers every total the analysis states equals the counters, and the one it does
not (counting_scatter's stores, whose addresses are the ranks its atomics return in the order the
hardware runs the lanes) is bounded by a range holding the measurement; without them no total is
stated that the data decides (unknown, naming the buffer), so none is complete and wrong."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from bankproof.verifier.kernel.totals import COUNTERS

from tests import kernel_cases as kc

pytestmark = [pytest.mark.gpu_replay, pytest.mark.slow]

RECORD = (
    Path(__file__).resolve().parent.parent
    / "gpu_checks"
    / "results"
    / "h100-2026-12-07-kernel-truth-data.json.gz"
)
if not RECORD.exists():
    pytest.skip("the device record of the data set is not committed yet", allow_module_level=True)
RECORDED = json.loads(gzip.decompress(RECORD.read_bytes()))["cases"]


def _num(v) -> int:
    return int(float(str(v).replace(",", "")))


@pytest.fixture(scope="module")
def analysed():
    if not kc.have_nvrtc():
        pytest.skip("the CUDA kernels' headers need the cuda extra")
    out = {}
    for r in RECORDED:
        c = kc.case(r["name"], kc.DATA)
        out[r["name"]] = (kc.analyse_case(c, r["ptx_text"], data=True), kc.analyse_case(c, r["ptx_text"]))
    return out


def test_the_record_is_the_data_set():
    assert not any(r.get("failed") for r in RECORDED)
    assert {r["name"] for r in RECORDED} == {c["name"] for c in kc.cases(kc.DATA)}
    assert len(RECORDED) >= 15


def stated_totals_equal(result, rec) -> list:
    """Every total ``result`` states (instructions, wavefronts) against the record's counters; the
    totals whose wavefronts it leaves unstated."""
    unstated = []
    for t in result.totals:
        if t.kind not in COUNTERS:
            continue
        inst, wave = (rec["metrics"][m] for m in COUNTERS[t.kind])
        if t.instructions is not None:
            assert t.instructions == _num(inst), (t.kind, t.instructions, inst)
        if t.wavefronts is not None:
            assert t.wavefronts == _num(wave), (t.kind, t.wavefronts, wave)
        else:
            unstated.append(t.kind)
            if t.range is not None:  # bounds, where stated, hold the measurement
                assert t.range[0] <= _num(wave) <= t.range[1], (t.kind, t.range, wave)
    return unstated


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_with_the_data_every_stated_total_equals_the_counters(analysed, rec):
    with_data, _ = analysed[rec["name"]]
    unstated = stated_totals_equal(with_data, rec)
    if unstated:  # not stated: only where the hardware's order decides (an atomic's returned value)
        assert any(i.wavefronts is None and i.reason for i in with_data.instructions)
        assert all("the hardware orders" in (i.reason or "") or "what shared memory holds" in (i.reason or "")
                   for i in with_data.instructions if i.wavefronts is None), rec["name"]  # fmt: skip
        assert all(t.range is not None for t in with_data.totals if t.kind in unstated)
    for kind, (inst, _) in COUNTERS.items():  # nothing measured that the analysis did not see
        if kind not in {t.kind for t in with_data.totals}:
            assert _num(rec["metrics"][inst]) == 0, kind


@pytest.mark.parametrize("rec", RECORDED, ids=[r["name"] for r in RECORDED])
def test_without_the_data_nothing_wrong_is_stated(analysed, rec):
    _, without = analysed[rec["name"]]
    stated_totals_equal(without, rec)
    assert without.verdict in ("unknown", "refuted")
