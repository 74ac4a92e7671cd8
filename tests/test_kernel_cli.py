"""``bankproof kernel`` as users run it: text, JSON, SARIF and HTML; exit codes; bad input refused
with the field named (exit 2, no traceback); files it must not touch; the input fuzzer."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main

import bankproof
from tests import fuzzing
from tests import kernel_cases as kc
from tests.test_kernel_machine import CALLS

CONFLICT = """
.visible .entry k(.param .u32 k_param_0)
{
  .shared .align 4 .b8 buf[8192];
  ld.param.u32 %r9, [k_param_0];
  mov.u32 %r1, %tid.x;
  mul.lo.s32 %r2, %r1, %r9;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  .loc 1 12 5
  ld.shared.u32 %r5, [%r4];
}
.file 1 "kern.cu"
"""


RICH = """
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
  .reg .b32 %r<20>;
  .shared .align 16 .b8 buf[4096];
  ld.param.u64 %rd1, [k_param_0];
  ld.param.u32 %r9, [k_param_1];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
$L_top:
  { .reg .pred p; setp.lt.u32 p, %r1, 16; @p shl.b32 %r3, %r1, 4; @!p shl.b32 %r3, %r1, 5; }
  shfl.sync.bfly.b32 %r4, %r3, 1, 31, -1;
  mov.u32 %r5, buf;
  add.s32 %r6, %r5, %r4;
  and.b32 %r6, %r6, 4080;
  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r6];
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd2, %rd3;
  cp.async.ca.shared.global [%r6], [%rd4], 16;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r14, %r15, %r16, %r17}, [%r6];
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r9;
  @%p1 bra $L_top;
  mov.u32 %r7, dyn;
  st.shared.u32 [%r7+4], %r2;
  ret;
}
.file 1 "rich.cu"
"""
BASES = [CONFLICT, RICH, CALLS]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def ptx(tmp_path: Path) -> Path:
    p = tmp_path / "kern.ptx"
    p.write_text(CONFLICT)
    return p


def test_text_json_sarif_html(ptx, tmp_path):
    code, out, _ = run("kernel", str(ptx), "--block", "32", "--arg", "k_param_0=128")
    assert code == 1
    assert "kern.cu:12" in out and "lanes 0 and 1" in out and "32 wavefronts, ideal 1" in out
    code, out, _ = run("kernel", str(ptx), "--block", "32", "--arg", "0=4", "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "proved" and data["schema"] == 2
    assert data["lines"] == [{"location": {"file": "kern.cu", "line": 12, "column": 0}, "kinds": ["ld"],
                              "instructions": 1, "wavefronts": 1, "ideal": 1, "verdict": "proved"}]  # fmt: skip
    code, out, _ = run("kernel", str(ptx), "--block", "32", "--arg", "0=128", "--sarif")
    sarif = json.loads(out)
    (res,) = sarif["runs"][0]["results"]
    assert res["ruleId"] == "BPK001" and res["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    assert sarif["runs"][0]["tool"]["driver"]["version"]
    page = tmp_path / "page.html"
    code, _, _ = run("kernel", str(ptx), "--block", "32", "--arg", "0=128", "--html", str(page))
    assert code == 1 and "<table>" in page.read_text() and "refuted" in page.read_text()


def test_unknown_argument_is_exit_3(ptx):
    code, out, _ = run("kernel", str(ptx), "--block", "32")
    assert code == 3 and "unknown" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--block", "2000"], "--block"),
        (["--block", "0"], "--block"),
        (["--block", "32x8x8"], "more than 1024"),
        (["--block", "abc"], "--block"),
        (["--cta", "5"], "--cta"),
        (["--dynamic-smem", "-1"], "--dynamic-smem"),
        (["--dynamic-smem", "999999999"], "--dynamic-smem"),
        (["--arg", "nope=1"], "names no parameter"),
        (["--arg", "k_param_0"], "NAME=INTEGER"),
        (["--arg", "k_param_0=1", "--arg", "k_param_0=2"], "twice"),
        (["--arg", "k_param_0=99999999999999999999999"], "64 bits"),
        (["--kernel", "other"], "is not a kernel of the module"),
        (["--max-steps", "0"], "--max-steps"),
        (["--time-limit", "-3"], "--time-limit"),
        (["--html", ""], "--html"),
    ],
)
def test_bad_input_is_refused(ptx, argv, needle):
    code, out, err = run("kernel", str(ptx), *argv)
    assert code == 2, (argv, out, err)
    assert needle in err and "Traceback" not in err and err.count("\n") == 1


def test_html_never_overwrites_the_source(ptx):
    before = ptx.read_text()
    code, _, err = run("kernel", str(ptx), "--block", "32", "--html", str(ptx))
    assert code == 2 and "overwrite" in err and ptx.read_text() == before


def test_files_and_texts_that_are_not_kernels(tmp_path):
    assert run("kernel", str(tmp_path / "missing.ptx"))[0] == 2
    assert run("kernel", str(tmp_path))[0] == 2  # a folder
    junk = tmp_path / "junk.ptx"
    junk.write_bytes(b"\xff\xfe\x00")
    assert run("kernel", str(junk))[0] == 2
    empty = tmp_path / "empty.ptx"
    empty.write_text(".version 8.0\n")
    code, _, err = run("kernel", str(empty))
    assert code == 2 and "no .entry" in err


@pytest.mark.skipif(not kc.have_nvrtc(), reason="needs the cuda extra (NVRTC)")
@pytest.mark.parametrize(
    "source,needle",
    [
        ('#include "/etc/passwd"\n__global__ void k() {}', "not given"),
        ('#include "../secret.h"\n__global__ void k() {}', "not given"),
        ("#define F <stdio.h>\n#include F\n__global__ void k() {}", "literally"),
        ('#include "nothere.h"\n__global__ void k() {}', "not given"),
        ("__global__ void k() { int x = ; }", "does not compile"),
    ],
)
def test_cuda_sources_cannot_reach_other_files(tmp_path, source, needle):
    cu = tmp_path / "k.cu"
    cu.write_text(source)
    code, _, err = run("kernel", str(cu), "--block", "32")
    assert code == 2 and needle in err, err


@pytest.mark.skipif(not kc.have_nvrtc(), reason="needs the cuda extra (NVRTC)")
def test_cuda_source_with_cxx_argument_names(tmp_path):
    cu = tmp_path / "t.cu"
    cu.write_text('extern "C" __global__ void __launch_bounds__(64) t(float *out, int stride) {\n'
                  "  __shared__ float s[64 * 33];\n  s[threadIdx.x * stride] = 1.f;\n  __syncthreads();\n"
                  "  out[threadIdx.x] = s[threadIdx.x];\n}\n")  # fmt: skip
    r = bankproof.kernel(cu, block=64, args={"stride": 33})
    assert r.verdict == "proved" and [ln.location.line for ln in r.lines] == [3, 5]
    r = bankproof.kernel(cu, block=64, args={"stride": 32}, defines={"UNUSED": "1"})
    assert r.verdict == "refuted" and r.lines[0].wavefronts == 64
    with pytest.raises(InputError, match="its parameters: out, stride"):
        bankproof.kernel(cu, block=64, args={"strid": 1})
    with pytest.raises(InputError, match="define"):
        bankproof.kernel(cu, block=64, defines={"A\n#include <x>": "1"})


def test_pytest_helper(ptx):
    from bankproof.testing import assert_kernel_conflict_free

    assert_kernel_conflict_free(ptx, block=32, args={"k_param_0": 4})
    with pytest.raises(AssertionError, match=r"kern.cu:12 ld.shared.u32 .*32 wavefronts, ideal 1"):
        assert_kernel_conflict_free(ptx, block=32, args={"k_param_0": 128})
    assert_kernel_conflict_free(ptx, block=32, args={"k_param_0": 128}, lines=[99])  # another line


def test_result_shows_itself():
    r = bankproof.kernel(CONFLICT, block=32, args={"0": 128}, language="ptx")
    assert r.to_text().startswith("<text>: kernel k on sm90") and "<pre" in r._repr_html_()
    assert json.loads(r.to_json())["instructions"][0]["conflict"]["lanes"] == [0, 1]


def test_fuzzed_ptx_and_launches():
    """Mutated PTX texts and launch values: a result or one InputError, never a crash or a hang."""
    rng = random.Random(39)
    seen = {"ok": 0, "refused": 0}
    for _ in range(fuzzing.count(160)):
        text = fuzzing.mutate(rng.choice(BASES), rng, rng.randint(1, 6))
        launch = fuzzing.mutate_value({"block": 32, "grid": 1, "cta": [0, 0, 0], "dynamic_smem": 0,
                                       "args": {"0": 4}}, rng)  # fmt: skip
        if not isinstance(launch, dict):
            launch = {"block": launch}

        def call(text=text, launch=launch):
            return bankproof.kernel(text, language="ptx", max_steps=20000, time_limit=10, **launch)

        seen[fuzzing.check(call, (text, launch))] += 1
    assert seen["ok"] and seen["refused"]


@pytest.mark.compile
@pytest.mark.skipif(not kc.have_nvrtc(), reason="needs the cuda extra (NVRTC)")
def test_tensor_maps_check_the_wgmma_descriptors():
    """The sm90 example's TMA boxes (given as tensor maps) against its wgmma descriptors, by agree's
    rules: with the maps the kernel is built for, every descriptor reads its tile as written; with A's
    map in the 64-byte mode, the first one reads element (1, 0) from the wrong byte."""
    src = kc.EXAMPLES / "sm90_tma_wgmma.cu"
    right = {
        "tmA": {"tma": "128B", "box": [64, 64], "dtype": "bf16"},
        "tmB": {"tma": "128B", "box": [64, 64], "dtype": "bf16"},
    }
    r = bankproof.kernel(src, block=128, args={"K": 256}, tensor_maps=right)
    assert len(r.descriptors) == 32 and {d.verdict for d in r.descriptors} == {"proved"}
    assert r.descriptors[1].tensor_map == "tma_wgmma_gemm_param_1" and r.descriptors[1].tile_base == 8192
    code, out, err = run("kernel", str(src), "--block", "128", "--arg", "K=256", "--tensor-map", "tmA=64B,64x32,bf16",
                         "--tensor-map", "tmB=128B,64x64,bf16")  # fmt: skip
    assert (
        code == 1 and "operand A 0x4000004000010000" in out and "element (1, 0) is written at byte 64" in out
    )
    r = bankproof.kernel(src, block=128, args={"K": 256})
    assert {d.verdict for d in r.descriptors} == {"unknown"} and "no tensor maps given" in r.descriptors[
        0
    ].reason
    assert run("kernel", str(src), "--tensor-map", "tmA=128B,64,bf16")[0] == 2
    with pytest.raises(InputError, match="tensor_maps"):
        bankproof.kernel(src, block=128, args={"K": 256}, tensor_maps={"nope": right["tmA"]})


def test_sarif_validates_against_the_sarif_2_1_0_schema(ptx, tmp_path):
    """Conflicts (BPK001), undecided lines (BPK002) and a misaligned address (BPK003) in one file,
    validated by the official schema."""
    from tests.test_triton_scan import _sarif_schema

    jsonschema, schema = _sarif_schema()
    mixed = tmp_path / "mixed.ptx"
    mixed.write_text(CONFLICT.replace("  ld.shared.u32 %r5, [%r4];", "  ld.shared.u32 %r5, [%r4];\n"
                                      "  ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r2];\n"
                                      "  ld.global.u32 %r10, [%rd9];\n  add.s32 %r11, %r3, %r10;\n"
                                      "  ld.shared.u32 %r12, [%r11];"))  # fmt: skip
    code, out, _ = run("kernel", str(mixed), "--block", "32", "--arg", "0=136", "--sarif")
    sarif = json.loads(out)
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert rules == {"BPK001", "BPK002", "BPK003"}, rules
    jsonschema.Draft4Validator(schema).validate(sarif)


@pytest.mark.gpu_replay
def test_a_measured_profile_joined_line_by_line(tmp_path):
    """``--ncu``: the H100 record's source view of the naive transpose joined with the analysis of
    the same PTX (every line as predicted); one wavefront count changed in the export: exit 4 naming
    the line; a file that is not an export: exit 2."""
    import csv
    import gzip
    import io

    from tests.test_kernel_truth import RECORD

    rec = next(c for c in json.loads(gzip.decompress(RECORD.read_bytes()))["cases"]
               if c["name"] == "transpose_naive_tile")  # fmt: skip
    ptx, export = tmp_path / "t.ptx", tmp_path / "t.csv"
    ptx.write_text(rec["ptx_text"])
    export.write_text(rec["source_csv"])
    argv = ["kernel", str(ptx), "--kernel", "transpose_naive_tile", "--block", "32x8", "--arg", "2=1024"]
    code, out, _ = run(*argv, "--ncu", str(export))
    assert code == 1 and "2 of 2 lines as predicted" in out
    code, out, _ = run(*argv, "--ncu", str(export), "--json")
    assert [(m["line"], m["kind"], m["wavefronts"], m["agrees"]) for m in json.loads(out)["measured"]] == [
        (14, "st", 32, True), (19, "ld", 1024, True)]  # fmt: skip
    rows = list(csv.reader(io.StringIO(rec["source_csv"])))
    col = next(r for r in rows if r and r[0] == "Line No").index("L1 Wavefronts Shared")
    for r in rows:
        if len(r) > col and r[3].strip().startswith("LDS"):
            r[col] = str(int(r[col]) - 8)
            break
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL).writerows(rows)
    export.write_text(buf.getvalue())
    code, out, _ = run(*argv, "--ncu", str(export))
    assert code == 4 and "transpose.cu:19 ld: measured 32 executed, 1016 wavefronts; predicted" in out
    code, _, err = run(*argv, "--ncu", str(ptx))
    assert code == 2 and "--ncu has no source lines" in err
