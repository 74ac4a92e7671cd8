"""A ``torch.compile``d model captured on the device (lab/gpu/device_capture_inductor.sh: an
Embedding-Linear-GELU-LayerNorm-softmax model under ``bankproof.capture``, Inductor's kernels
launched through Triton's launcher while capturing) and replayed here without a GPU: every
Inductor kernel's launch is captured, and each launch's totals over its grid equal Nsight
Compute's SASS-level counters for the same launch (the model's second call, measured inside the
NVTX range ``measure``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bankproof

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parent.parent
DEVICE = ROOT / "tests" / "data" / "capture_inductor_h100"
RECORD = ROOT / "gpu_checks" / "results" / "h100-2026-12-08-inductor-truth.json"
if not RECORD.exists():
    pytest.skip(
        "the device record of the torch.compile capture is not committed yet", allow_module_level=True
    )
TRUTH = json.loads(RECORD.read_text())
KINDS = {
    "ld": ("smsp__sass_inst_executed_op_shared_ld.sum", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    "st": ("smsp__sass_inst_executed_op_shared_st.sum", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    "ldsm": ("sm__sass_inst_executed_op_ldsm.sum", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"),
}  # fmt: skip


def _num(v) -> int:
    return int(float(str(v).replace(",", "")))


def test_every_inductor_kernel_is_captured_launching():
    probe = json.loads((DEVICE / "probe.json").read_text())
    assert probe["errors"] == []
    launched = {name for name, _ in probe["launches"]}
    measured = {k["kernel"] for k in TRUTH["kernels"] if k["kernel"].startswith("triton_")}
    assert measured and measured <= launched


def test_each_launch_s_totals_equal_the_counters():
    reports = bankproof.replay(DEVICE).reports
    checked = 0
    for k in TRUTH["kernels"]:
        if not k["kernel"].startswith("triton_"):
            continue  # cuBLAS's GEMM: not a Triton kernel
        mine = [r for r in reports if r.file.split(" (")[0] == k["kernel"] and r.ledger.launch is not None
                and r.ledger.launch.ctas == k["grid_size"]]  # fmt: skip
        assert mine, k["kernel"]
        whole = {json.dumps(r.ledger.launch.to_dict(), sort_keys=True) for r in mine}
        assert len(whole) == 1, k["kernel"]  # autotuned configs of one grid agree, or the match is unsure
        totals = mine[0].ledger.launch.totals
        assert totals is not None, (k["kernel"], mine[0].ledger.launch.why)
        for kind, (inst, wave) in KINDS.items():
            got = totals.get(kind)
            want = (_num(k["metrics"][inst]), _num(k["metrics"][wave]))
            pair = (got.instructions, got.wavefronts) if got else (0, 0)
            assert pair == want, (k["kernel"], kind)
        checked += 1
    assert checked >= 2


def test_the_environment_switch_captures_the_same_launches():
    """``triton capture DIR -- CMD``'s way (BANKPROOF_CAPTURE and a sitecustomize, the capture
    installed before PyTorch loads, Inductor asked through its environment variables), run on
    the same H100 with the same model: the same kernels launched on the same grids, no hook error
    (gpu_checks/results/h100-2026-12-08-capture-env.json, lab/gpu/device_capture_env.sh)."""
    env = json.loads((ROOT / "gpu_checks" / "results" / "h100-2026-12-08-capture-env.json").read_text())
    probe = json.loads((DEVICE / "probe.json").read_text())
    assert env["errors"] == []
    assert sorted((x["kernel"], x["grid"]) for x in env["launches"]) == sorted(map(tuple, probe["launches"]))
