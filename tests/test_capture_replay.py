"""Triton launches captured from a program (``bankproof.capture``, ``triton capture``) and replayed
without a GPU (``triton replay``): Triton's own hooks called as its runtime calls them (a compile
loaded, a ``@triton.jit`` function compiled, a launch entered; this machine has no GPU to launch
on), the directory replayed equal to the live analysis of the same compile, launch and data; the
directory read as user input (its fuzzer); the command's exit codes."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

import bankproof
from tests import fuzzing

triton = pytest.importorskip("triton")
from bankproof.verifier.cli.main import main  # noqa: E402
from bankproof.verifier.triton import capture as cap_mod  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "launch_data"
SIG = {"x_ptr": "*fp32", "lens_ptr": "*i32", "out_ptr": "*fp32", "BLOCK": "constexpr"}


@pytest.fixture(scope="module")
def compiled():
    """``seg_colsum`` (a loop of ``lens[pid]`` trips over a reduction through shared memory),
    compiled here by Triton for sm90, and its ``@triton.jit`` function."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # (as the corpus compiles)
    spec = importlib.util.spec_from_file_location("seg_capture_kernels", DATA / "seg.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = mod.seg_colsum
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    src = ASTSource(fn=fn, signature=SIG, constexprs={"BLOCK": 64}, attrs=attrs)
    return fn, triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


def launch(fn, k, grid, args, handle=1234):
    """What Triton's runtime does around one launch of ``k``: its launch metadata (the function's
    ``launch_metadata`` chained in), then ``launch_enter_hook``."""
    from triton import knobs
    from triton.compiler.compiler import LazyDict

    lazy = LazyDict({"name": k.name, "function": handle, "stream": 0})
    if fn.launch_metadata is not None:
        lazy.add(fn.launch_metadata, (grid, k.metadata, args))
    knobs.runtime.launch_enter_hook(lazy)


def record(tmp: Path, compiled, lens_values, grid=(2,)) -> Path:
    from triton import knobs
    from triton.runtime.jit import JitFunctionInfo

    fn, k = compiled
    with bankproof.capture(tmp) as cap:
        knobs.runtime.kernel_load_end_hook(None, 1234, k.name, k.metadata_group, k.hash)
        knobs.runtime.jit_post_compile_hook(key="k", repr="r", fn=JitFunctionInfo(fn.module, "seg_colsum", fn),
                                            compile={}, is_manual_warmup=False, already_compiled=False)  # fmt: skip
        for lens in lens_values:
            args = {"x_ptr": np.zeros(64 * 64 * 16, np.float32), "lens_ptr": np.array(lens, np.int32),
                    "out_ptr": np.zeros(256, np.float32), "BLOCK": 64}  # fmt: skip
            launch(fn, k, grid, args)
        assert cap.launches
    fn.launch_metadata = None  # (the module's function is shared by the tests)
    return tmp


def test_a_capture_records_the_compile_and_only_the_buffers_that_decide(tmp_path, compiled):
    record(tmp_path, compiled, [[3, 5]])
    rec = json.loads((tmp_path / "capture.json").read_text())
    (key,) = rec["compiles"]
    assert key == compiled[1].hash and rec["compiles"][key]["name"] == "seg_colsum"
    (la,) = rec["launches"]
    assert la["grid"] == [2, 1, 1] and la["args"] == {"BLOCK": 64}
    assert list(la["buffers"]) == ["lens_ptr"]  # x and out are read or written, but decide nothing
    assert np.load(tmp_path / la["buffers"]["lens_ptr"]).view(np.int32).tolist() == [3, 5]


def test_one_launch_shape_is_kept_once(tmp_path, compiled):
    record(tmp_path, compiled, [[3, 5], [4, 5], [3, 5]])  # the same grid and integers: one shape
    assert len(json.loads((tmp_path / "capture.json").read_text())["launches"]) == 1


def test_the_replay_equals_the_live_analysis(tmp_path, compiled):
    """The replay of CTA 0 with the captured data is the scan of the same compile with the same
    arguments and buffer: 3 trips of 8 loads of 4 wavefronts."""
    record(tmp_path, compiled, [[3, 5]])
    (rep,) = bankproof.replay(tmp_path).reports
    ttgir, ptx = compiled[1].asm["ttgir"], compiled[1].asm["ptx"]
    args = {"BLOCK": 64, "program_id_x": 0, "num_programs_x": 2, "program_id_y": 0, "num_programs_y": 1,
            "program_id_z": 0, "num_programs_z": 1}  # fmt: skip
    (live,) = bankproof.scan_ttgir(
        ttgir, ptx=ptx, args=args, buffers={"lens_ptr": np.array([3, 5], np.int32)}
    ).reports
    assert rep.ledger.to_dict() == live.ledger.to_dict()
    assert rep.ledger.totals["ld"].wavefronts == 96 and rep.ledger.incomplete == ()
    assert rep.file == "seg_colsum (launch 0, grid (2, 1, 1))"


def test_the_replay_command_reports_and_gates(tmp_path, compiled):
    record(tmp_path, compiled, [[3, 5]])
    out, err = io.StringIO(), io.StringIO()
    code = main(["triton", "replay", str(tmp_path)], out, err)
    assert code == 0 and "ld 96 wavefronts / 24 instructions" in out.getvalue()
    out = io.StringIO()
    assert main(["triton", "replay", str(tmp_path), "--json"], out, io.StringIO()) == 0
    assert json.loads(out.getvalue())["schema"] == 2


def test_a_program_run_under_triton_capture_gets_the_hooks(tmp_path, capfd):
    """``triton capture DIR -- CMD``: the command's Python starts with the hooks installed."""
    probe = "from triton import knobs; print('hooked', knobs.runtime.jit_post_compile_hook is not None)"
    out, err = io.StringIO(), io.StringIO()
    code = main(["triton", "capture", str(tmp_path), "--", sys.executable, "-c", probe], out, err)
    assert code == 0 and "hooked True" in capfd.readouterr().out
    assert json.loads((tmp_path / "capture.json").read_text())["schema"] == 1
    assert main(["triton", "capture", str(tmp_path)], out, err) == 2 and "CMD" in err.getvalue()
    code = main(
        ["triton", "capture", str(tmp_path), "--", sys.executable, "-c", "raise SystemExit(5)"], out, err
    )
    assert code == 5  # the command's own exit


@pytest.mark.parametrize(
    ("record_", "message"),
    [
        ({"schema": 2}, "schema 1"),
        ({"schema": 1, "compiles": [], "launches": []}, "needs compiles"),
        (
            {"schema": 1, "compiles": {"k": {"name": "n", "ttgir": "../x.ttgir"}}, "launches": []},
            "relative path",
        ),
        (
            {"schema": 1, "compiles": {"k": {"name": "n", "ttgir": "/etc/passwd"}}, "launches": []},
            "relative path",
        ),
        ({"schema": 1, "compiles": {}, "launches": [{"compile": "nope"}]}, "names no captured compile"),
    ],
)
def test_a_bad_capture_is_refused_naming_the_field(tmp_path, record_, message):
    (tmp_path / "capture.json").write_text(json.dumps(record_))
    out, err = io.StringIO(), io.StringIO()
    assert main(["triton", "replay", str(tmp_path)], out, err) == 2
    assert message in err.getvalue() and "Traceback" not in err.getvalue()


def test_fuzzed_capture_directories(tmp_path, compiled):
    """Mutated capture records: a report or one InputError, never a crash, a hang or a read
    outside the directory."""
    good = record(tmp_path / "good", compiled, [[2, 1]])
    text = (good / "capture.json").read_text()
    rng = random.Random(57)
    seen = {"ok": 0, "refused": 0}
    for n in range(fuzzing.count(30)):
        d = tmp_path / f"f{n}"
        d.mkdir()
        for sub in ("compiles", "launches"):
            (d / sub).symlink_to(good / sub)
        (d / "capture.json").write_text(fuzzing.mutate(text, rng, rng.randint(1, 4)))
        seen[fuzzing.check(lambda d=d: bankproof.replay(d), str(d))] += 1
    assert seen["refused"]
    assert cap_mod.SCHEMA == 1


ROOT = Path(__file__).resolve().parent.parent
DEVICE = ROOT / "tests" / "data" / "capture_h100"  # lab/gpu/capture_probe.py on an H100


def test_a_capture_made_on_a_gpu_replays_here():
    """A capture made on an H100 (Triton 3.6.0, PyTorch 2.11: ``seg_colsum`` launched on 2 CTAs
    with lens = [3, 5], and a ``torch.compile``d Linear-GELU-LayerNorm whose Inductor kernel is
    captured as a compile): replayed here without a GPU, the launch's ledger is complete for CTA 0
    (3 trips of Triton 3.6's lowering: 24 ld32 and 136 wavefronts a trip) and equals the live
    scan of the captured texts with the captured data; the Inductor kernel, with no launch
    values, is scanned alone, and Triton 3.6's reduction lowering there is named as what no TTGIR
    op owns (exit 4), not counted."""
    rec = json.loads((DEVICE / "probe.json").read_text())
    assert (rec["triton"], rec["compiles"], rec["launches"]) == ("3.6.0", 2, 1)
    reports = {r.file.split(" (")[0]: r for r in bankproof.replay(DEVICE).reports}
    seg = reports["seg_colsum"]
    assert seg.ledger.incomplete == ()
    assert (seg.ledger.totals["ld"].wavefronts, seg.ledger.totals["ld"].instructions) == (408, 72)
    cap = json.loads((DEVICE / "capture.json").read_text())
    key = cap["launches"][0]["compile"]
    ttgir, ptx = ((DEVICE / cap["compiles"][key][x]).read_text() for x in ("ttgir", "ptx"))
    lens = np.load(DEVICE / cap["launches"][0]["buffers"]["lens_ptr"])
    args = {"BLOCK": 64, "program_id_x": 0, "num_programs_x": 2, "program_id_y": 0, "num_programs_y": 1,
            "program_id_z": 0, "num_programs_z": 1}  # fmt: skip
    (live,) = bankproof.scan_ttgir(ttgir, ptx=ptx, args=args, buffers={"lens_ptr": lens}).reports
    assert live.ledger.to_dict() == seg.ledger.to_dict()
    inductor = reports["triton_per_fused_gelu_native_layer_norm_0"]
    assert inductor.ledger.unattributed and "no TTGIR op" in inductor.ledger.unattributed[0]
    truth = json.loads((ROOT / "gpu_checks" / "results" / "h100-2026-12-07-capture-truth.json").read_text())
    m = {k.split("__")[-1].replace(".sum", ""): int(v.replace(",", "")) for k, v in truth["metrics"].items()}
    assert (
        m["sass_inst_executed_op_shared_ld"],
        m["sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld"],
    ) == (72, 408)
    for kind, inst, wave in (("ld", "sass_inst_executed_op_shared_ld", "sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld"),
                             ("st", "sass_inst_executed_op_shared_st", "sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st"),
                             ("ldsm", "sass_inst_executed_op_ldsm", "sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm")):  # fmt: skip
        t = seg.ledger.totals[kind]  # the replay's CTA 0 against the H100's counters for that CTA alone
        assert (t.instructions, t.wavefronts) == (m[inst], m[wave]), kind
    out, err = io.StringIO(), io.StringIO()
    assert main(["triton", "replay", str(DEVICE)], out, err) == 4
    assert "ld 408 wavefronts / 72 instructions" in out.getvalue()


def test_a_hook_that_fails_never_fails_the_program(tmp_path):
    """Triton calls the hooks inside the user's launches: an error there is kept in the record, and
    the launch goes on."""
    cap = cap_mod.Capture(tmp_path)
    cap.on_load(None, 1, "k", {"k.ttgir": str(tmp_path / "missing.ttgir")}, "h")  # no file: nothing kept
    cap.on_launch(object())  # not launch metadata
    cap.on_compile(fn=None)
    cap.record_compile("h", "k", "not ttgir", None)
    cap.on_launch({"bankproof_launch": ((1,), "h", {"x": np.zeros(4)}), "function": 7})
    rec = json.loads((tmp_path / "capture.json").read_text())
    assert rec["errors"] and all(":" in e for e in rec["errors"])
