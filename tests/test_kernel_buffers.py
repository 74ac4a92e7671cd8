"""The launch's own data (``--buffer``, ``buffers=``): loaded values decide a loop's trip count, a
branch and an address exactly, and without them the unknown names the buffer and the flag; a null
pointer; a buffer too small; a buffer the kernel writes is not read; the flag's files and the API's
values refused with the field named; the fuzzer of the new input."""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.cli.main import main
from bankproof.verifier.kernel import buffers as bf
from bankproof.verifier.kernel.pointers import written_params
from bankproof.verifier.ptx.module import kernel_code, read_module

import bankproof
from tests import fuzzing

# lens[0]: a loop's trip count; lens[1]: a branch; perm: an address; bias: a null test; out: written
PTX = """
.visible .entry seg(.param .u64 lens, .param .u64 perm, .param .u64 out, .param .u64 bias)
{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .shared .align 4 .b8 tile[4096];
  ld.param.u64 %rd1, [lens];
  ld.param.u64 %rd2, [perm];
  ld.param.u64 %rd3, [out];
  ld.param.u64 %rd4, [bias];
  cvta.to.global.u64 %rd5, %rd1;
  cvta.to.global.u64 %rd6, %rd2;
  cvta.to.global.u64 %rd7, %rd3;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, tile;
  shl.b32 %r3, %r1, 7;
  add.s32 %r4, %r2, %r3;
  .loc 1 5 5
  ld.global.u32 %r5, [%rd5];
  mov.u32 %r6, 0;
  setp.lt.s32 %p1, %r5, 1;
  @%p1 bra $L_done;
$L_loop:
  and.b32 %r7, %r6, 31;
  shl.b32 %r8, %r7, 2;
  add.s32 %r9, %r4, %r8;
  .loc 1 6 9
  st.shared.u32 [%r9], %r6;
  add.s32 %r6, %r6, 1;
  setp.lt.s32 %p2, %r6, %r5;
  @%p2 bra $L_loop;
$L_done:
  bar.sync 0;
  mul.wide.u32 %rd8, %r1, 4;
  add.s64 %rd9, %rd6, %rd8;
  .loc 1 8 5
  ld.global.u32 %r10, [%rd9];
  shl.b32 %r11, %r10, 7;
  mov.u32 %r13, %r11;
  and.b32 %r13, %r13, 4095;
  add.s32 %r14, %r2, %r13;
  .loc 1 9 5
  ld.shared.u32 %r15, [%r14];
  setp.eq.s64 %p3, %rd4, 0;
  @%p3 bra $L_nobias;
  .loc 1 10 5
  ld.shared.u32 %r16, [%r4];
$L_nobias:
  ld.global.u32 %r17, [%rd5+4];
  setp.gt.s32 %p3, %r17, 3;
  @!%p3 bra $L_end;
  .loc 1 12 5
  ld.shared.u32 %r18, [%r2];
$L_end:
  add.s64 %rd10, %rd7, %rd8;
  st.global.u32 [%rd10], %r15;
  ret;
}
.file 1 "seg.cu"
"""


def run(**buffers):
    return bankproof.kernel(PTX, block=32, buffers=buffers or None, engines="enum")


def by_line(r) -> dict[int, tuple]:
    out: dict[int, tuple] = {}
    for i in r.instructions:
        out[i.location.line] = (i.instructions, i.wavefronts, i.verdict)
    return out


LENS = np.array([5, 7], dtype=np.int32)
PERM = np.arange(32, dtype=np.int32)


def test_a_loaded_trip_count_is_exact_with_its_buffer_and_named_without():
    r = run(lens=LENS, perm=PERM, bias=None)
    assert by_line(r)[6] == (5, 160, "refuted")  # five trips, each a 32-way conflict
    r9 = run(lens=np.array([9, 0], dtype=np.int32), perm=PERM, bias=None)
    assert by_line(r9)[6] == (9, 288, "refuted")
    r0 = run(lens=np.array([0, 0], dtype=np.int32), perm=PERM, bias=None)
    assert by_line(r0)[6] == (0, 0, "proved")  # never entered
    without = run()
    assert without.verdict == "unknown"
    assert any("buffer lens (not given: --buffer lens=FILE.npy)" in u for u in without.unknown)


def test_a_loaded_branch_is_decided_by_its_buffer():
    taken = by_line(run(lens=np.array([1, 4], dtype=np.int32), perm=PERM, bias=None))
    skipped = by_line(run(lens=np.array([1, 3], dtype=np.int32), perm=PERM, bias=None))
    assert taken[12] == (1, 1, "proved") and skipped[12] == (0, 0, "proved")


def test_a_loaded_address_is_exact_with_its_buffer_and_named_without():
    same_row = by_line(run(lens=LENS, perm=PERM, bias=None))
    assert same_row[9] == (1, 32, "refuted")  # perm[t] = t: word 32 t, one bank for all
    one_row = by_line(run(lens=LENS, perm=np.zeros(32, np.int32), bias=None))
    assert one_row[9] == (1, 1, "proved")  # every lane reads word 0: a broadcast
    r = run(lens=LENS, bias=None)
    (i,) = [i for i in r.instructions if i.location.line == 9]
    assert i.verdict == "unknown" and "the buffer perm (not given: --buffer perm=FILE.npy)" in i.reason


def test_a_null_pointer_decides_its_test():
    with_null = by_line(run(lens=LENS, perm=PERM, bias=None))
    with_bias = by_line(run(lens=LENS, perm=PERM, bias=np.zeros(32, np.float32)))
    assert with_null[10] == (0, 0, "proved") and with_bias[10] == (1, 32, "refuted")


def test_a_buffer_smaller_than_what_the_kernel_reads_names_the_access():
    with pytest.raises(
        InputError,
        match=r"lens holds 4 bytes; the load at seg.cu:10 \(PTX line \d+\) reads bytes 4..7 of it \(thread 0\)",
    ):
        run(lens=np.array([5], np.int32), perm=PERM, bias=None)  # lens[1], read after line 10's .loc
    with pytest.raises(InputError, match=r"perm holds 64 bytes; the load at seg.cu:8"):
        run(lens=LENS, perm=np.arange(16, dtype=np.int32), bias=None)


def test_a_buffer_the_kernel_writes_is_not_read():
    """``out`` is written by the kernel: what a load of it reads depends on other CTAs."""
    text = PTX.replace(
        "ld.global.u32 %r10, [%rd9];", "add.s64 %rd11, %rd7, %rd8;\n  ld.global.u32 %r10, [%rd11];"
    )
    r = bankproof.kernel(text, block=32, buffers={"lens": LENS, "out": PERM, "bias": None}, engines="enum")
    (i,) = [i for i in r.instructions if i.location.line == 9]
    assert i.verdict == "unknown" and "the buffer out, which the kernel writes" in i.reason
    code = kernel_code(read_module(text), None)
    assert written_params(code) == {"out"}


def test_positions_and_bytes_name_buffers_too():
    a = by_line(run(lens=LENS, perm=PERM, bias=None))
    b = by_line(bankproof.kernel(PTX, block=32, buffers={"0": LENS.tobytes(), "1": PERM, "3": None},
                                 engines="enum"))  # fmt: skip
    assert a == b


@pytest.mark.parametrize(
    ("buffers", "message"),
    [
        ({"nope": None}, "names no parameter"),
        ({"lens": "5"}, "must be a numpy array"),
        ({"lens": np.array([object()])}, "holds Python objects"),
        ({"lens": LENS, "0": LENS}, "name one parameter twice"),
        ([("lens", LENS)], "must be a mapping"),
    ],
)
def test_bad_buffers_are_refused_naming_the_field(buffers, message):
    with pytest.raises(InputError, match=message):
        bankproof.kernel(PTX, block=32, buffers=buffers)


def test_a_buffer_given_as_an_integer_too_is_refused():
    with pytest.raises(InputError, match="also given as an integer"):
        bankproof.kernel(PTX, block=32, args={"lens": 4096}, buffers={"lens": LENS})


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_the_flag_reads_npy_raw_and_null(tmp_path):
    src = tmp_path / "seg.ptx"
    src.write_text(PTX)
    np.save(tmp_path / "lens.npy", LENS)
    PERM.tofile(tmp_path / "perm.bin")
    code, out, err = cli("kernel", str(src), "--block", "32", "--buffer", f"lens={tmp_path / 'lens.npy'}",
                         "--buffer", f"perm={tmp_path / 'perm.bin'}:int32", "--buffer", "bias=null", "--json")  # fmt: skip
    assert code == 1 and not err  # refuted: the loop's stores conflict
    code, out, err = cli("kernel", str(src), "--block", "32")
    assert code == 3 and "--buffer lens=FILE.npy" in out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("lens", "must be NAME=FILE.npy"),
        ("=x.npy", "must be NAME=FILE.npy"),
        ("lens={d}/missing.npy", "no such file"),
        ("lens={d}/odd.bin:int32", "is not whole int32 elements"),
        ("lens={d}/obj.npy", "cannot be read"),
        ("lens={d}/raw.bin:complex", "is not a dtype"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(tmp_path, spec, message):
    src = tmp_path / "seg.ptx"
    src.write_text(PTX)
    (tmp_path / "odd.bin").write_bytes(b"\x01\x02\x03")
    (tmp_path / "raw.bin").write_bytes(b"\x01\x02\x03\x04")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    code, out, err = cli("kernel", str(src), "--block", "32", "--buffer", spec.format(d=tmp_path))
    assert code == 2 and message in err and "Traceback" not in err and "buffer" in err


def test_loads_read_little_endian_and_extend_by_type():
    data = np.array([0x80, 0xFF, 0x01, 0x00, 0xFE, 0xFF, 0xFF, 0xFF], dtype=np.uint8).tobytes()
    mem = bf.GlobalMemory({"p": bf.Buffer(data)}, {"p": 1 << 40})
    at = np.array([1 << 40])
    assert mem.load(at, np.ones(1, bool), 1, True, 1)[0][0].tolist() == [-128]
    assert mem.load(at, np.ones(1, bool), 1, False, 1)[0][0].tolist() == [128]
    assert mem.load(at, np.ones(1, bool), 2, False, 1)[0][0].tolist() == [0xFF80]
    assert [v.tolist() for v in mem.load(at, np.ones(1, bool), 4, True, 2)[0]] == [[0x1FF80], [-2]]
    assert bf.load_width("ld.global.nc.v2.s16") == (2, True, 2)


def test_fuzzed_buffers_and_specs(tmp_path):
    """Mutated specs, files and values: a result or one InputError, never a crash or a hang."""
    rng = random.Random(57)
    np.save(tmp_path / "ok.npy", LENS)
    seen = {"ok": 0, "refused": 0}
    for n in range(fuzzing.count(40)):
        blob = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
        f = tmp_path / f"f{n}.npy"
        f.write_bytes(rng.choice([blob, (tmp_path / "ok.npy").read_bytes()[: rng.randint(0, 140)]]))
        spec = fuzzing.mutate(f"lens={f}", rng, rng.randint(0, 2))

        def call(spec=spec):
            got = bf.read_specs([spec, "bias=null"])
            return bankproof.kernel(
                PTX, block=32, buffers={**got, "perm": PERM}, max_steps=20000, time_limit=10
            )

        seen[fuzzing.check(call, spec)] += 1
    assert seen["refused"]


TRITON = Path(__file__).resolve().parent / "data" / "launch_data"  # seg.py compiled by Triton 3.9.0 (sm90)


def test_a_triton_loop_on_a_loaded_bound_is_totalled_with_its_buffer():
    """``seg_colsum`` loops ``lens[pid]`` times over a reduction through shared memory (8 stores and
    8 loads of 128 bits per trip, 4 wavefronts each): with the buffer and the launch's program id,
    the ledger is complete and its totals are the trips times the per-trip counts; without it, the
    trip count stays a formula that names the buffer and the flag."""
    ttgir, ptx = (TRITON / "seg.ttgir").read_text(), (TRITON / "seg.ptx").read_text()
    ids = {"program_id_x": 1, "num_programs_x": 2}
    for trips in (5, 0, 12):
        lens = np.array([3, trips], dtype=np.int32)
        (rep,) = bankproof.scan_ttgir(ttgir, ptx=ptx, args=ids, buffers={"lens_ptr": lens}).reports
        led = rep.ledger
        assert led.incomplete == () and led.unknowns is None
        assert (led.totals["ld"].wavefronts, led.totals["ld"].instructions) == (32 * trips, 8 * trips)
        assert (led.totals["st"].wavefronts, led.totals["st"].instructions) == (
            16 + 32 * trips,
            4 + 8 * trips,
        )
    (rep,) = bankproof.scan_ttgir(ttgir, ptx=ptx, args=ids).reports
    assert rep.ledger.incomplete and "--buffer lens_ptr=FILE.npy" in rep.ledger.unknowns[0].why


def test_the_scan_flag_needs_ptx_and_reads_the_file(tmp_path):
    np.save(tmp_path / "lens.npy", np.array([3, 5], dtype=np.int32))
    code, out, err = cli(
        "triton", "scan", str(TRITON / "seg.ttgir"), "--buffer", f"lens_ptr={tmp_path / 'lens.npy'}"
    )
    assert code == 2 and "--buffer" in err and "needs --ptx" in err
    code, out, err = cli("triton", "scan", str(TRITON / "seg.ttgir"), "--ptx", str(TRITON / "seg.ptx"),
                         "--arg", "program_id_x=1", "--arg", "num_programs_x=2",
                         "--buffer", f"lens_ptr={tmp_path / 'lens.npy'}")  # fmt: skip
    assert code == 0 and "ld 160 wavefronts / 40 instructions" in out and "ledger: complete" in out
    code, out, err = cli("triton", "scan", str(TRITON / "seg.ttgir"), "--ptx", str(TRITON / "seg.ptx"),
                         "--buffer", f"lens_ptr={tmp_path / 'lens.npy'}")  # fmt: skip
    assert (
        code == 2
        and "--buffer needs the launch whole (a run of one CTA reads it): --arg program_id_x=INT" in err
    )
