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
from dataclasses import replace
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
    assert replace(rep.ledger, launch=None).to_dict() == live.ledger.to_dict()  # (+ the launch's totals)
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
    values, is scanned alone: its two ``tl.sum`` reductions' scratch, whose PTX names only the
    callers' lines in ``.loc`` comments (``standard.py:293:36 @[ k.py:49:26 ]``), is owned by
    each reduction's own op (5 st32 and 5 ld32 a CTA each)."""
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
    assert live.ledger.to_dict() == replace(seg.ledger, launch=None).to_dict()
    inductor = reports["triton_per_fused_gelu_native_layer_norm_0"]
    assert inductor.ledger.unattributed == () and inductor.ledger.incomplete == ()
    lines = sorted(
        (e["location"], e["instr"], e["instructions"]) for e in inductor.ledger.to_dict()["entries"]
    )
    assert [(s.rsplit(":", 2)[-2], i, n) for s, i, n in lines] == [
        ("49", "ld32", 5), ("49", "st32", 5), ("57", "ld32", 5), ("57", "st32", 5)
    ]  # fmt: skip
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
    assert main(["triton", "replay", str(DEVICE)], out, err) == 0
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


def test_a_kernel_compiled_outside_jit_run_is_captured_launching(tmp_path, compiled, monkeypatch):
    """Inductor compiles with ``triton.compile`` and launches with only the non-constexpr
    arguments: the capture finds the kernel's ``JITFunction`` by name in the loaded modules (an
    autotuner's ``fn``), chains its ``launch_metadata`` as the compile loads, names the arguments
    by the non-constexpr parameters, records the launch, and puts the function back as it ends."""
    import types

    from triton import knobs
    from triton.compiler.compiler import LazyDict

    fn, k = compiled
    module = types.ModuleType("inductor_generated_kernels")
    module.seg_colsum = types.SimpleNamespace(fn=fn)  # as Inductor's CachingAutotuner holds it
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with bankproof.capture(tmp_path) as cap:
        knobs.runtime.kernel_load_end_hook(None, 99, k.name, k.metadata_group, k.hash)
        assert fn.launch_metadata is not None
        lens = np.array([2, 7], np.int32)
        call_args = (np.zeros(64 * 64 * 16, np.float32), lens, np.zeros(256, np.float32))  # no BLOCK
        lazy = LazyDict({"name": k.name, "function": 99, "stream": 0})
        lazy.add(fn.launch_metadata, ((2, 1, 1), k.metadata, dict(zip(fn.arg_names, call_args))))
        knobs.runtime.launch_enter_hook(lazy)
    assert fn.launch_metadata is None  # put back
    (la,) = cap.launches
    assert la["grid"] == [2, 1, 1] and list(la["buffers"]) == ["lens_ptr"]
    (rep,) = bankproof.replay(tmp_path).reports
    assert rep.ledger.totals["ld"].wavefronts == 2 * 32 and rep.ledger.incomplete == ()


def test_inductor_is_asked_for_triton_s_launcher_only_while_capturing(tmp_path, monkeypatch):
    """Without PyTorch loaded, the capture sets the environment Inductor reads as it loads (only
    where the program has not set it) and puts it back."""
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", raising=False)
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "8")
    with bankproof.capture(tmp_path):
        assert os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] == "0"
        assert os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "8"  # the program's own, kept
    assert "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER" not in os.environ


def test_a_launch_s_totals_are_every_cta_s(tmp_path, compiled):
    """The launch's totals: where a count needs the program id (``lens[pid]`` trips), each CTA's
    ledger is run and summed (3 + 5 trips of 32 ld wavefronts); where none does (the Inductor
    LayerNorm captured on the H100, launched here on 8 CTAs), CTA 0's times the CTAs, proved by the
    ledger with the program ids unknown."""
    from bankproof.verifier.triton import launch_totals as lt

    record(tmp_path / "seg", compiled, [[3, 5]])
    (rep,) = bankproof.replay(tmp_path / "seg").reports
    whole = rep.ledger.launch
    assert (whole.ctas, whole.how, whole.totals["ld"].wavefronts) == (2, lt.EACH, 32 * (3 + 5))
    cap = json.loads((DEVICE / "capture.json").read_text())
    key = next(k for k, c in cap["compiles"].items() if c["name"].startswith("triton_per"))
    (tmp_path / "ind" / "compiles").mkdir(parents=True)
    for ext in ("ttgir", "ptx"):
        (tmp_path / "ind" / cap["compiles"][key][ext]).write_text(
            (DEVICE / cap["compiles"][key][ext]).read_text()
        )
    cap["compiles"] = {key: cap["compiles"][key]}
    cap["launches"] = [{"compile": key, "grid": [8, 1, 1], "args": {"xnumel": 64, "r0_numel": 512}}]
    (tmp_path / "ind" / "capture.json").write_text(json.dumps(cap))
    (rep,) = bankproof.replay(tmp_path / "ind").reports
    whole, cta = rep.ledger.launch, rep.ledger.totals
    assert (whole.ctas, whole.how) == (8, lt.ALIKE)
    assert {k: (t.wavefronts, t.instructions) for k, t in whole.totals.items()} == {
        k: (8 * t.wavefronts, 8 * t.instructions) for k, t in cta.items()
    }
    assert cta["st"].wavefronts == 10
    record(tmp_path / "wide", compiled, [[3, 5]], grid=(lt.MAX_CTAS + 1,))  # CTAs that may differ, too many
    (rep,) = bankproof.replay(tmp_path / "wide").reports
    assert rep.ledger.launch.totals is None and "more than the 64" in rep.ledger.launch.why


def test_a_cta_whose_data_is_short_leaves_the_launch_s_totals_unknown_saying_why(tmp_path, compiled):
    """CTA 1 reads ``lens[1]``, past a one-element buffer: CTA 0's totals stand, the launch's are
    not known, and the reason is the load's own error."""
    record(tmp_path, compiled, [[3]])
    (rep,) = bankproof.replay(tmp_path).reports
    assert rep.ledger.incomplete == () and rep.ledger.totals["ld"].wavefronts == 96
    whole = rep.ledger.launch
    assert whole.totals is None and whole.why.startswith("CTA (1, 0, 0)'s totals are not complete: ")
    assert "lens_ptr" in whole.why and "4 bytes" in whole.why, whole.why


def test_a_triton_buffer_too_small_is_an_error_naming_the_access(compiled):
    """``triton scan --buffer``: CTA 1's ``lens[1]`` past a one-element buffer is refused, naming
    the buffer, its size and the bytes read (not left unknown as if no buffer were given)."""
    from bankproof.models.errors import InputError

    ttgir, ptx = compiled[1].asm["ttgir"], compiled[1].asm["ptx"]
    args = {"BLOCK": 64, "program_id_x": 1, "num_programs_x": 2, "program_id_y": 0, "num_programs_y": 1,
            "program_id_z": 0, "num_programs_z": 1}  # fmt: skip
    with pytest.raises(InputError, match=r"lens_ptr holds 4 bytes; .* reads bytes 4\.\.7"):
        bankproof.scan_ttgir(ttgir, ptx=ptx, args=args, buffers={"lens_ptr": np.array([3], np.int32)})
