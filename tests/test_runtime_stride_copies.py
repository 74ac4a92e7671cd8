"""``cp.async`` copies whose global stride along the tile's contiguous dim is a runtime argument
(a transposed or sliced view: ``lab/public/strided.py``), measured on an H200
(``gpu_checks/results/h200-2026-11-28-strided.json.gz``). The TTGIR's address arithmetic says the
stride is not known (:mod:`bankproof.verifier.triton.strides`), so without the launch's values each
such copy is a range from its store count to every lane reading its own bank line; given them, the
kernel machine runs the PTX and counts the copy exactly. Every complete total equals ncu; every
range holds the measurement."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest
from bankproof.gpu_checks.results import RESULTS
from bankproof.verifier.triton.strides import element_strides

RECORD = json.loads(gzip.decompress((RESULTS / "h200-2026-11-28-strided.json.gz").read_bytes()))
needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
CLASS = {"ldgsts_cg_wavefronts": "ldgsts_bypass", "ldgsts_ca_wavefronts": "ldgsts"}


@pytest.fixture(scope="module")
def compiled():
    from bankproof.verifier.triton import corpus

    configs = {c["name"]: c for c in corpus.load_kernels_file("lab/public/strided.py").CONFIGS}
    return {
        r["name"]: corpus.compile_kernel(configs[r["name"]], "sm90", "lab/public/strided.py")
        for r in RECORD["runs"]
    }


def _ledger(ttgir: str, ptx: str, args):
    from bankproof.verifier.triton import ledger
    from bankproof.verifier.triton.scan import scan_text

    return ledger.build(scan_text(ttgir), ttgir, ptx, args)


@pytest.mark.slow
@needs_triton
def test_given_the_launch_every_total_is_exact_or_a_range_that_holds_ncu(compiled, capsys):
    from bankproof.verifier.triton import ledger
    from bankproof.verifier.triton.measured_rules import async_copies

    from lab.gpu.triton_kernels import compare

    complete, ranged = [], []
    for run in RECORD["runs"]:
        rec = _ledger(*compiled[run["name"]], {**run["args"], **ledger.ONE_CTA})
        led = rec.to_dict()
        assert not led["disagreements"] and not led["unattributed"], run["name"]
        diffs = compare(run["measured"], led["totals"], async_copies(rec))
        if not led["incomplete"]:
            assert diffs == {}, (run["name"], diffs)
            complete.append(run["name"])
            continue
        for key, (predicted, measured) in diffs.items():
            assert predicted is None, (run["name"], key)
            lo, hi = led["totals"][CLASS[key]]["range"]["wavefronts"]
            assert lo <= measured <= hi, (run["name"], key, lo, measured, hi)
        ranged.append(run["name"])
    with capsys.disabled():
        print(f"\nruntime-stride copies: {len(complete)} of {len(RECORD['runs'])} complete and equal to ncu, "
              f"{len(ranged)} ranges holding it")  # fmt: skip
    assert sorted(complete) == ["str_matmul_a_bf16_at_64x64x64", "str_sum_fp32_s1_512_w8", "str_sum_fp32_s3_256",
                                "str_sum_fp32_s64_256"]  # fmt: skip


@needs_triton
def test_a_runtime_stride_opens_the_copy_and_the_run_closes_it(compiled):
    """One warp of ``x[(i*256 + o) * s]`` (4-byte copies, a stride argument): the scan cannot
    tell the lanes' lines apart, the run with ``s = 64`` (each lane its own bank line: 32
    wavefronts) and ``s = 3`` (12-byte steps: every bank once, 1 wavefront) can."""
    from bankproof.verifier.triton import ledger
    from bankproof.verifier.triton.scan import scan_text

    ttgir, ptx = compiled["str_sum_fp32_s64_256"]
    copies = [a for b in scan_text(ttgir).buffers for a in b.accesses if "async_copy" in a.op]
    assert copies and all(a.wavefronts_max == 32 * a.instructions for a in copies)
    assert all("runtime value" in a.lines_note for a in copies)
    per_instruction = {}
    for s in (64, 3):
        rec = _ledger(ttgir, ptx, {"n": 1024, "s": s, **ledger.ONE_CTA})
        first = next(e for e in rec.entries if e.family == "ldgsts" and not e.loops)
        per_instruction[s] = first.wavefronts // first.instructions
    assert per_instruction == {64: 32, 3: 1}
    open_ = _ledger(ttgir, ptx, None).to_dict()
    assert open_["totals"]["ldgsts"]["wavefronts"] is None and open_["incomplete"]


def _defs(lines: str) -> dict[str, str]:
    return {ln.split("=", 1)[0].strip(): ln.strip() for ln in lines.strip().splitlines()}


T2 = "tensor<32x64xi32, #b>"
BASE = f"""
%m = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32, #s1>
%n = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #s0>
%me = tt.expand_dims %m {{axis = 1 : i32}} : tensor<32xi32, #s1> -> tensor<32x1xi32, #b>
%ne = tt.expand_dims %n {{axis = 0 : i32}} : tensor<64xi32, #s0> -> tensor<1x64xi32, #b>
%c64 = arith.constant dense<64> : tensor<32x1xi32, #b>
%st = tt.splat %stride : i32 -> tensor<1x64xi32, #b>
%rows = arith.muli %me, %c64 : tensor<32x1xi32, #b>
%mb = tt.broadcast %rows : tensor<32x1xi32, #b> -> {T2}
%nb = tt.broadcast %ne : tensor<1x64xi32, #b> -> {T2}
%off = arith.addi %mb, %nb : {T2}
%cols = arith.muli %ne, %st : tensor<1x64xi32, #b>
%cb = tt.broadcast %cols : tensor<1x64xi32, #b> -> {T2}
%soff = arith.addi %mb, %cb : {T2}
%ipb = tt.splat %iptr : !tt.ptr<i32> -> tensor<32x1x!tt.ptr<i32>, #b>
%ip = tt.addptr %ipb, %me : tensor<32x1x!tt.ptr<i32>, #b>, tensor<32x1xi32, #b>
%idx = tt.load %ip : tensor<32x1x!tt.ptr<i32>, #b>
%g = arith.muli %idx, %c64 : tensor<32x1xi32, #b>
%gb = tt.broadcast %g : tensor<32x1xi32, #b> -> {T2}
%goff = arith.addi %gb, %nb : {T2}
%mod = arith.remsi %off, %c64b : {T2}
"""


def test_strides_follow_the_address_arithmetic():
    defs = _defs(BASE)
    args = frozenset({"%stride", "%iptr", "%c64b"})
    s = lambda v: element_strides(defs, {}, v, None, args)  # noqa: E731
    assert s("%off") == (64, 1)  # rows of 64, contiguous columns
    assert s("%soff") == (64, None)  # a runtime column stride
    assert s("%goff") == (None, 1)  # gathered rows (indices loaded), contiguous within each
    assert s("%mod") == (None, None)  # remsi by a runtime value
    assert s("%undefined") is None


def test_loop_carried_pointers_keep_their_strides_only_when_the_yield_does():
    defs = _defs(BASE + "%adv = tt.addptr %p, %step : tensor<32x64x!tt.ptr<f32>, #b>, tensor<32x64xi32, #b>\n"
                 "%step = tt.splat %k : i32 -> tensor<32x64xi32, #b>\n"
                 "%bad = tt.addptr %q, %off : tensor<32x64x!tt.ptr<f32>, #b>, tensor<32x64xi32, #b>\n"
                 "%p0 = tt.addptr %base, %off : tensor<32x64x!tt.ptr<f32>, #b>, tensor<32x64xi32, #b>\n"
                 "%base = tt.splat %x : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #b>")  # fmt: skip
    args = frozenset({"%k", "%x", "%stride", "%iptr", "%c64b"})
    carried = {"%p": "%p0", "%q": "%p0"}
    yields = {"%p": "%adv", "%q": "%bad"}  # %p advances uniformly; %q adds a tile's offsets again
    assert element_strides(defs, yields, "%p", carried, args) == (64, 1)
    assert element_strides(defs, yields, "%q", carried, args) is None


def test_interlocked_loop_values_stay_within_the_step_budget():
    """Each loop-carried value yields the sum of the next two: the induction check is bounded."""
    import time

    n = 60
    defs = {f"%y{i}": f"%y{i} = arith.addi %a{i + 1}, %a{i + 2} : tensor<64xi32, #b>" for i in range(n)}
    defs["%r"] = "%r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #b>"
    carried = {f"%a{i}": "%r" for i in range(n + 2)}
    yields = {f"%a{i}": f"%y{i}" for i in range(n)}
    t0 = time.perf_counter()
    assert element_strides(defs, yields, "%a0", carried) is None
    assert time.perf_counter() - t0 < 2.0


PTX = str(Path(__file__).resolve().parent.parent / "examples" / "triton" / "strided_sum.ptx")


@pytest.mark.slow
def test_the_stride_left_open_on_tritons_ptx_by_residue_class():
    """The same kernel's PTX (Triton 3.9.0's, ``examples/triton/strided_sum.ptx``) with the stride
    left open: each 4-byte ``cp.async`` is conflict-free for every odd stride (a proof over 1..64)
    and 2^k-way on the global side for a stride of 2^k times an odd number, as the H200 sweep
    measured for strides of 4 to 512 bytes; the measured kernels (s = 3: 48, s = 64: 1040) are
    runs of the same machine (the first test)."""
    import bankproof

    r = bankproof.kernel_open(PTX, "strided_sum_param_3=1..64", args={"strided_sum_param_2": 1024})
    assert (r.verdict, r.runs) == ("refuted", 64)
    first = r.instructions[0]
    assert (first.instr, first.smallest) == ("cp4.ca", 2)
    per = {c.values: c.wavefronts // 4 for c in first.classes}  # 4 warps, one copy each
    assert per == {
        "strided_sum_param_3 ≡ 1 (mod 2)": 1,
        "strided_sum_param_3 ≡ 2 (mod 4)": 2,
        "strided_sum_param_3 ≡ 4 (mod 8)": 4,
        "strided_sum_param_3 ≡ 8 (mod 16)": 8,
        "strided_sum_param_3 ≡ 16 (mod 32)": 16,
        "strided_sum_param_3 ≡ 0 (mod 32)": 32,
    }
    assert [c.verdict for c in first.classes if c.wavefronts == 4] == ["proved"]
