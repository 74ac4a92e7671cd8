"""The PTX evaluator (``verifier/ptx/``) on the constructs Triton 3.9.0 emits for warp
specialization and for library code: shuffles of the warp id, byte permutes, narrowing converts,
inline-asm labels, jump tables and the worker warps' state word."""

from __future__ import annotations

import numpy as np
from bankproof.verifier.ptx import analyse, compute, parse_kernel
from bankproof.verifier.triton.ledger import _loop_map
from bankproof.verifier.triton.sites import Loop, Site, read_sites


def _kernel(body: str, threads: int = 128) -> str:
    return f".visible .entry k(.param .u64 k_param_0)\n.reqntid {threads}\n{{\n{body}\n}}\n"


def test_integer_ops_added_for_library_code():
    a = np.array([0x12345, 0x1FFFF])
    assert compute("cvt.u16.u32", [a], ["%r1"]).tolist() == [0x2345, 0xFFFF]  # narrowing keeps low bits
    assert compute("cvt.s64.s32", [np.array([0xFFFFFFFF])], ["%r1"]).tolist() == [-1]
    # prmt.b32 d, a, b, 0x7701: bytes (a.1, a.0, b.3, b.3)
    got = compute("prmt.b32", [np.array([0x0201]), np.array([0x80000000]), np.array([0x7701])], [])
    assert got.tolist() == [0x80800102]
    got = compute("prmt.b32", [np.array([0x80]), np.array([0]), np.array([0x0088])], [])  # sign-replicate
    assert got.tolist() == [0x8080FFFF]


def test_shuffle_of_the_warp_id_is_known_per_thread():
    k = parse_kernel(
        _kernel(
            """
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;
  setp.lt.u32 %p1, %r3, 2;
  @!%p1 bra $L__BB0_2;
  mov.b32 %r4, global_smem;
  st.shared.b32 [%r4], %r1;
$L__BB0_2:
  ret;"""
        )
    )
    (op,) = analyse(k)[0]
    assert op.reach.any(axis=1).tolist() == [True, True, False, False]  # warps 0 and 1 only


def test_inline_asm_labels_are_local_to_their_block():
    """Every mbarrier wait is an inline-asm block with its own ``waitLoop:``; a branch to it must
    not jump to another block's label (which made far code reachable)."""
    wait = "{\n.reg .pred c;\nwaitLoop:\nmbarrier.try_wait.parity.shared::cta.b64 c, [%r9], 0;\n@!c bra.uni waitLoop;\n}"
    k = parse_kernel(
        _kernel(
            f"""
  mov.u32 %r1, %tid.x;
  mov.b32 %r9, global_smem;
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra $L__BB0_2;
{wait}
  bra.uni $L__BB0_3;
$L__BB0_2:
{wait}
  st.shared.b32 [%r9], %r1;
$L__BB0_3:
  ret;"""
        )
    )
    ops, loops = analyse(k)
    st = next(o for o in ops if o.name == "st32")
    assert st.reach.any(axis=1).tolist() == [False, True, True, True]  # warp 0 never gets there
    assert loops == []  # spin-waits are not loops of the program


STATE = """
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;
  mov.b32 %r9, global_smem;
  setp.lt.u32 %p1, %r3, 2;
  @!%p1 bra $L__BB0_1;
  st.shared.v2.b32 [global_smem+64], {65536, 0};
  bar.sync 1;
  st.shared.b32 [global_smem+16], %r1;
  st.shared.v2.b32 [global_smem+64], {50529027, 0};
  bar.sync 1;
  ret;
$L__BB0_1:
  bar.sync 1;
  add.s32 %r4, %r9, %r3;
  ld.shared.b8 %r5, [%r4+64];
  DISPATCH
$L__BB0_10:
  ld.shared.b32 %r6, [global_smem+16];
  bra.uni $L__BB0_1;
$L__BB0_11:
  ld.shared.b64 %rd1, [global_smem+24];
  bra.uni $L__BB0_1;
$L__BB0_12:
  bra.uni $L__BB0_1;
$L__BB0_13:
  ret;
"""


def _state_kernel(dispatch: str) -> str:
    return _kernel(STATE.replace("DISPATCH", dispatch), threads=128)


def test_state_word_dispatch_through_a_jump_table():
    """Worker warps 2 and 3 read their byte of the state word (stored by the default warps 0-1:
    warp 2 -> partition 1, warp 3 -> partition 0, then both exit) and jump through ``brx.idx``."""
    ptx = _state_kernel("brx.idx %r5, JT;")
    ptx = ptx.replace(
        "{\n", "{\nJT:\n.branchtargets\n$L__BB0_10,\n$L__BB0_11,\n$L__BB0_12,\n$L__BB0_13;\n", 1
    )
    k = parse_kernel(ptx)
    assert k.tables == {"JT": ["$L__BB0_10", "$L__BB0_11", "$L__BB0_12", "$L__BB0_13"]}
    ops, loops = analyse(k)
    warps = {o.name: o.reach.any(axis=1).tolist() for o in ops}
    assert warps["ld32"] == [False, False, False, True]  # partition 0: warp 3
    assert warps["ld64"] == [False, False, True, False]  # partition 1: warp 2
    assert warps["ld8"] == [False, False, True, True]
    state = {o.ins.line: o.extra.get("ws_state") for o in ops if o.extra.get("ws_state")}
    assert sorted(state.values()) == [1, 1, 2]  # two stores; each worker loads its byte twice
    assert loops == []  # the dispatch loop is not a loop of the program


def test_state_word_dispatch_through_compares():
    """The same dispatch lowered as a chain of compares (Triton 3.9.0 on sm90)."""
    chain = (
        "setp.eq.b32 %p2, %r5, 0;\n@%p2 bra $L__BB0_10;\nsetp.eq.b32 %p3, %r5, 1;\n@%p3 bra $L__BB0_11;\n"
        "setp.eq.b32 %p4, %r5, 2;\n@%p4 bra $L__BB0_12;\nbra.uni $L__BB0_13;"
    )
    ops, _ = analyse(parse_kernel(_state_kernel(chain)))
    warps = {o.name: o.reach.any(axis=1).tolist() for o in ops}
    assert warps["ld32"] == [False, False, False, True]
    assert warps["ld64"] == [False, False, True, False]


def test_state_word_not_covering_a_reader_is_unknown():
    """If a warp that reads the state word is not covered by the constant stores, the value is
    not known: both ways are taken rather than a guess."""
    ptx = _state_kernel("brx.idx %r5, JT;").replace(
        "st.shared.v2.b32 [global_smem+64], {65536, 0};", "st.shared.b8 [global_smem+66], 1;"
    )  # not warp 3's byte
    ptx = ptx.replace(
        "{\n", "{\nJT:\n.branchtargets\n$L__BB0_10,\n$L__BB0_11,\n$L__BB0_12,\n$L__BB0_13;\n", 1
    )
    ops, _ = analyse(parse_kernel(ptx))
    ld32 = next(o for o in ops if o.name == "ld32")
    assert ld32.reach.any(axis=1).tolist() == [False, False, True, True]
    assert ld32.conditional


def test_loops_paired_by_their_source_lines_not_their_order():
    """LLVM placed the second scf.for's loop first: pairing follows the lines in the bodies."""
    ptx = _kernel(
        """
  mov.u32 %r1, %tid.x;
  mov.b32 %r2, 0;
$L__BB0_1:
.loc 1 20 3
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, 8;
  @%p1 bra $L__BB0_1;
$L__BB0_2:
.loc 1 10 3
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p2, %r2, 4;
  @%p2 bra $L__BB0_2;
  ret;""".replace(".loc 1", ".loc 1")
    )
    ptx += '.file 1 "k.py"\n'
    k = parse_kernel(ptx)
    first, second = Loop(3, "0", "4", "1"), Loop(8, "0", "8", "1")
    sites = [
        Site(4, "arith.addi", ("k.py", 10, 3), (first,)),
        Site(9, "arith.addi", ("k.py", 20, 3), (second,)),
    ]
    _, loops = analyse(k)
    got = _loop_map(k, loops, sites)
    assert {k.body[i].loc[1]: lp.line for i, lp in got.items()} == {20: 8, 10: 3}


WARP_SPECIALIZE = """module {
  tt.func public @k(%K: i32) {
    %c64 = arith.constant 64 : i32
    ttg.warp_specialize(%K) attributes {requestedRegisters = array<i32: 24>}
    default {
      ttg.local_store %x, %y : tensor<8xf32> -> !ttg.memdesc<8xf32> loc(#loc2)
      ttg.warp_yield loc(#loc1)
    }
    partition0(%K_3: i32 loc("K"(#loc))) num_warps(2) {
      %c0_i32 = arith.constant 0 : i32
      scf.for %i = %c0_i32 to %K_3 step %c64 : i32 {
        ttng.async_tma_copy_global_to_local %d[%i] %b loc(#loc2)
      } loc(#loc1)
      ttg.warp_return loc(#loc1)
    } : (i32) -> () loc(#loc1)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("k.py":1:0)
#loc1 = loc("k.py":5:3)
#loc2 = loc(callsite(#loc3 at #loc4))
#loc3 = loc("lib.py":9:1)
#loc4 = loc("k.py":7:5)"""


def test_warp_specialize_regions_and_location():
    """``ttg.warp_specialize``: the default region and each ``partitionN(...) num_warps(W)``
    region; the op's location is the one after its last region."""
    sites, _, _ = read_sites(WARP_SPECIALIZE)
    by = {s.name: s for s in sites}
    assert by["ttg.warp_specialize"].site == ("k.py", 5, 3)
    assert by["ttg.local_store"].partition is None
    tma = by["ttng.async_tma_copy_global_to_local"]
    assert tma.partition == (0, 2) and len(tma.loops) == 1
    assert tma.chain == (("lib.py", 9, 1), ("k.py", 7, 5))


def test_partition_loop_bounds_follow_the_captured_operands():
    """A partition's loop bound is its block argument; the argument is the op's operand."""
    sites, _, args = read_sites(WARP_SPECIALIZE)
    tma = next(s for s in sites if s.name == "ttng.async_tma_copy_global_to_local")
    assert args == ["K"] and tma.loops[0].trips({"K": 256}) == 4 and tma.loops[0].trips() is None


# ----- triton scan --ptx: the ledger without Triton installed ------------------------------------
DATA = __import__("pathlib").Path(__file__).resolve().parent / "data"
PAIR = [
    str(DATA / "matmul_fp16_128x128x32_sm80.ttgir"),
    "--ptx",
    str(DATA / "matmul_fp16_128x128x32_sm80.ptx"),
]


def test_scan_with_ptx_prints_the_ledger_and_trips(capsys):
    from bankproof.verifier.cli.main import main

    assert main(["triton", "scan", *PAIR, "--arg", "K=128"]) == 0
    out = capsys.readouterr().out
    assert "ledger: corpus_kernels.py:18:13 ttg.async_copy_global_to_local (buffer) cp16 x16 x4: 64" in out
    assert "ledger: corpus_kernels.py:21:5 ttg.convert_layout (scratch) st128 x64 x1: 256" in out
    assert main(["triton", "scan", *PAIR, "--json"]) == 0
    led = __import__("json").loads(capsys.readouterr().out)["reports"][0]["ledger"]
    assert led["totals"]["st"] == {"wavefronts": 256, "instructions": 64, "ideal": 256}
    ldsm = led["totals"]["ldsm"]  # K unknown: a formula in the loop's trips (K=128: 4 trips, 1152)
    assert (ldsm["wavefronts"], ldsm["formula"]["wavefronts"]) == (None, "128 + 256*trips_L94")
    assert led["unknowns"][0]["why"] == "argument K is not given (--arg K=N)"


def test_scan_with_ptx_exit_4_and_sarif_on_an_unowned_instruction(tmp_path, capsys):
    """A shared store at a line no TTGIR op has: named on stderr, exit 4, SARIF BP003."""
    from bankproof.verifier.cli.main import main

    ptx = (DATA / "matmul_fp16_128x128x32_sm80.ptx").read_text()
    extra = "\t.loc\t1 99 7\n\tst.shared.b32 \t[global_smem+4], %r102;\n\tret;"
    bad = tmp_path / "k.ptx"
    bad.write_text(ptx.replace("\tret;", extra, 1))
    args = ["triton", "scan", PAIR[0], "--ptx", str(bad)]
    assert main(args) == 4
    assert "corpus_kernels.py:99:7: 1 st32 with no TTGIR op to own it" in capsys.readouterr().err
    assert main([*args, "--sarif"]) == 4
    results = __import__("json").loads(capsys.readouterr().out)["runs"][0]["results"]
    bp3 = [r for r in results if r["ruleId"] == "BP003"]
    assert len(bp3) == 1 and bp3[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 99


def test_scan_with_ptx_bad_input_exit_2(tmp_path, capsys):
    import pytest
    from bankproof.models.errors import InputError
    from bankproof.verifier.api.scan import scan_ttgir
    from bankproof.verifier.cli.main import main

    assert main(["triton", "scan", PAIR[0], PAIR[0], "--ptx", PAIR[2]]) == 2
    assert "--ptx must be given once per TTGIR file" in capsys.readouterr().err
    assert main(["triton", "scan", PAIR[0], "--arg", "K=1"]) == 2
    assert "--arg needs --ptx" in capsys.readouterr().err
    assert main(["triton", "scan", *PAIR, "--arg", "K"]) == 2
    assert "--arg must be NAME=INTEGER, got K" in capsys.readouterr().err
    junk = tmp_path / "j.ptx"
    junk.write_text("not ptx")
    assert main(["triton", "scan", PAIR[0], "--ptx", str(junk)]) == 2
    assert "ptx cannot be read as a kernel" in capsys.readouterr().err
    with pytest.raises(InputError, match="args must map argument names to integers"):
        scan_ttgir(
            (DATA / "matmul_fp16_128x128x32_sm80.ttgir").read_text(), path="k", ptx="x", args={"K": "1"}
        )


def test_a_tail_load_feeding_a_predicated_store_runs_only_where_the_store_does():
    """``ld.shared`` whose value only a store under %p uses, followed by nothing else: ptxas exits
    the threads where %p is false first, so warps 2-3 never load (a measured rule)."""
    k = parse_kernel(
        _kernel(
            """
  mov.u32 %r1, %tid.x;
  mov.b32 %r2, global_smem;
  ld.shared.b32 %r3, [%r2];
  and.b32 %r4, %r1, 64;
  setp.eq.b32 %p1, %r4, 0;
  @%p1 st.global.b32 [%rd1], %r3;
  ret;"""
        )
    )
    (op,) = analyse(k)[0]
    assert op.active.any(axis=1).tolist() == [True, True, False, False] and op.extra["exit_before"]
    # another use of the value outside the predicate keeps every warp loading it
    body = """
  mov.u32 %r1, %tid.x;
  mov.b32 %r2, global_smem;
  ld.shared.b32 %r3, [%r2];
  and.b32 %r4, %r1, 64;
  setp.eq.b32 %p1, %r4, 0;
  add.s32 %r5, %r3, 1;
  @%p1 st.global.b32 [%rd1], %r5;
  ret;"""
    (op,) = analyse(parse_kernel(_kernel(body)))[0]
    assert op.active.all() and "exit_before" not in op.extra


def test_the_evaluator_reads_through_the_one_ptx_reader(monkeypatch):
    """``parse_kernel`` is the module reader's kernel seen by the evaluator: each instruction's
    location is what its ``.loc`` names (the ``inlined_at`` caller, file by base name), vector
    operands keep their text, threads come from ``.maxntid`` when there is no ``.reqntid``, and
    the module reader is the one that ran (counted)."""
    from bankproof.verifier.ptx import module, parse

    calls = []
    real = module.kernel_code
    monkeypatch.setattr(parse, "kernel_code", lambda m, n: calls.append(n) or real(m, n))
    k = parse_kernel(
        """.visible .entry first(.param .u64 first_param_0)
.maxntid 64, 2, 1
{
  .loc 1 7 3
  mov.u32 %r1, %tid.x;
  .loc 2 40 7, function_name $L__info_string0, inlined_at 1 9 5
  ld.shared.v2.b32 { %r2, %r3 },
      [%r1+8];
}
.visible .entry second()
{
  ret;
}
.file 1 "/home/u/kern.py"
.file 2 "/lib/triton/language/standard.py"
"""
    )
    assert calls == ["first"]
    assert (k.name, k.threads, k.params) == ("first", 128, [("u64", "first_param_0")])
    assert [(i.loc, i.line) for i in k.body] == [(("kern.py", 7, 3), 5), (("kern.py", 9, 5), 7)]
    assert k.body[1].operands == ["{ %r2, %r3 }", "[%r1+8]"]
