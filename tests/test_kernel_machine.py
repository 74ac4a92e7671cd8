"""The PTX machine on hand-written PTX: arithmetic at its width (wraparound, signedness, 64-bit
unsigned), warp collectives, control flow (loops from arguments, divergence, unknown branches),
shared symbols and generic pointers, inline-asm scopes, inlined source chains, ptxas's merges."""

from __future__ import annotations

import numpy as np
import pytest
from bankproof.models.errors import InputError
from bankproof.verifier.kernel import ptxas, simt
from bankproof.verifier.kernel.analyse import analyse, source_from_ptx
from bankproof.verifier.kernel.records import Launch
from bankproof.verifier.kernel.values import Value, arith, shuffle
from bankproof.verifier.ptx.module import kernel_code, read_module

import bankproof

N = 4


def v(*xs):
    return Value(np.array(xs, dtype=np.int64), np.ones(len(xs), bool))


@pytest.mark.parametrize(
    "opcode,srcs,want",
    [
        ("add.u32", [v(0xFFFFFFFF), v(2)], [1]),  # wraps at 32 bits
        ("sub.s32", [v(0), v(1)], [0xFFFFFFFF]),
        ("mul.wide.s32", [v(0xFFFFFFFD), v(4)], [-12]),  # a negative s32 widened
        ("mul.wide.u32", [v(0xFFFFFFFF), v(2)], [0x1FFFFFFFE]),
        ("mul.hi.u32", [v(0x80000000), v(4)], [2]),
        ("mad.lo.s32", [v(3), v(5), v(7)], [22]),
        ("shr.u64", [v(-1), v(60)], [15]),  # logical on 64 bits
        ("shr.s32", [v(0x80000000), v(31)], [0xFFFFFFFF]),
        ("shl.b32", [v(1), v(32)], [0]),
        ("setp.lt.u32", [v(0xFFFFFFFF), v(1)], [0]),
        ("setp.lt.s32", [v(0xFFFFFFFF), v(1)], [1]),
        ("setp.lo.u64", [v(-1), v(1)], [0]),
        ("shf.l.wrap.b32", [v(0x80000000), v(1), v(1)], [3]),
        ("popc.b32", [v(0xF0F0)], [8]),
        ("clz.b32", [v(1)], [31]),
        ("rem.u32", [v(10), v(4)], [2]),
        ("min.s32", [v(0xFFFFFFFF), v(3)], [0xFFFFFFFF]),
    ],
)
def test_arithmetic(opcode, srcs, want):
    assert arith(opcode, srcs).v.tolist() == want


def test_unknown_sources_stay_unknown():
    a = Value(np.array([1, 2]), np.array([True, False]))
    r = arith("add.s32", [a, v(1, 1)])
    assert r.k.tolist() == [True, False]
    assert arith("div.u32", [v(8, 8), Value(np.array([0, 2]), np.array([False, True]))]).v.tolist()[1] == 4
    assert arith("add.f32", [v(1), v(2)]) is None  # floats are never addresses


def test_shuffle_modes_and_segments():
    a = v(*range(64))
    on = np.ones(64, bool)
    assert shuffle(["shfl", "sync", "idx", "b32"], a, v(*[3] * 64), v(*[31] * 64), on).v[:3].tolist() == [
        3,
        3,
        3,
    ]
    down = shuffle(["shfl", "sync", "down", "b32"], a, v(*[1] * 64), v(*[31] * 64), on).v
    assert down[30:34].tolist() == [31, 31, 33, 34]  # lane 31 keeps its own; warps stay apart
    seg = (32 - 8) << 8 | 31  # width 8 segments
    up = shuffle(["shfl", "sync", "up", "b32"], a, v(*[1] * 64), v(*[seg & ~31] * 64), on).v
    assert up[:10].tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 8, 8]
    bfly = shuffle(["shfl", "sync", "bfly", "b32"], a, v(*[16] * 64), v(*[31] * 64), on).v
    assert bfly[:2].tolist() == [16, 17]


LOOP = """
.visible .entry k(.param .u32 k_param_0)
{
  .shared .align 16 .b8 buf[4096];
  ld.param.u32 %r9, [k_param_0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
$L_top:
  shl.b32 %r3, %r1, 2;
  shl.b32 %r8, %r2, 7;
  add.s32 %r3, %r3, %r8;
  mov.u32 %r4, buf;
  add.s32 %r5, %r4, %r3;
  .loc 1 7 3
  st.shared.u32 [%r5], %r2;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r9;
  @%p1 bra $L_top;
  ret;
}
.file 1 "loop.cu"
"""


def test_loop_trip_count_from_an_argument():
    r = bankproof.kernel(LOOP, block=64, args={"0": 5}, language="ptx")
    (st,) = r.instructions
    assert (st.instructions, st.wavefronts, st.verdict) == (10, 10, "proved")


def test_unknown_trip_count_is_unknown_not_a_number():
    r = bankproof.kernel(LOOP, block=64, language="ptx")  # the bound is not given
    assert r.verdict == "unknown"
    assert r.instructions[0].wavefronts is None
    assert "branch condition" in r.unknown[0]  # and what decides it: the argument and its flag
    assert r.unknown[0].endswith("depends on the argument k_param_0 (not given: --arg k_param_0=INT)")


def test_step_limit_is_unknown():
    r = bankproof.kernel(LOOP, block=64, args={"0": 10**6}, language="ptx", max_steps=200)
    assert r.verdict == "unknown" and "limit" in r.unknown[0]


DIVERGE = """
.visible .entry k()
{
  .shared .align 4 .b8 buf[8192];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.eq.s32 %p1, %r2, 0;
  mov.u32 %r4, buf;
  @%p1 bra $L_even;
  mul.lo.s32 %r3, %r1, 128;
  add.s32 %r5, %r4, %r3;
  st.shared.u32 [%r5], %r1;
  bra.uni $L_join;
$L_even:
  shl.b32 %r3, %r1, 2;
  add.s32 %r5, %r4, %r3;
  st.shared.u32 [%r5], %r1;
$L_join:
  shl.b32 %r6, %r1, 2;
  add.s32 %r7, %r4, %r6;
  ld.shared.u32 %r8, [%r7];
  st.global.u32 [%rd1], %r8;
  ret;
}
"""


def test_divergent_paths_run_in_turn_and_reconverge():
    r = bankproof.kernel(DIVERGE, block=32, language="ptx")
    odd, even, after = r.instructions
    assert (odd.instructions, odd.wavefronts) == (1, 16)  # 16 odd lanes, 128 bytes apart: one bank
    assert (even.instructions, even.wavefronts) == (1, 1)
    assert (after.instructions, after.wavefronts) == (1, 1)  # the whole warp again, one instruction


def test_generic_pointer_to_a_shared_symbol():
    ptx = """
.visible .entry k()
{
  .shared .align 4 .b8 buf[4096];
  mov.u64 %rd1, buf;
  cvta.shared.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 128;
  add.s64 %rd4, %rd2, %rd3;
  ld.u32 %r2, [%rd4];
}"""
    r = bankproof.kernel(ptx, block=32, language="ptx")
    (ld,) = r.instructions
    assert (ld.instr, ld.wavefronts, ld.rests_on) == ("ld32", 32, "measured")


def test_inline_asm_on_one_line_and_its_own_registers():
    ptx = """
.visible .entry k()
{
  .shared .align 4 .b8 buf[4096];
  mov.u32 %r1, %tid.x;
  { .reg .pred p; .reg .b32 t; setp.lt.u32 p, %r1, 16; @p shl.b32 t, %r1, 2; @!p shl.b32 t, %r1, 3; mov.b32 %r2, t; }
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
}"""
    code = kernel_code(read_module(ptx), None)
    assert (1, "p") in code.local and (1, "t") in code.local
    t = simt.run(code, Launch((32, 1, 1)))
    (inst,) = t.instances.values()
    assert inst.offsets[0, :3].tolist() == [0, 4, 8] and inst.offsets[0, 16:18].tolist() == [128, 136]


def test_elect_and_ballot():
    ptx = """
.visible .entry k()
{
  .shared .align 4 .b8 buf[4096];
  mov.u32 %r1, %tid.x;
  elect.sync %r2|%p1, -1;
  and.b32 %r5, %r1, 1;
  setp.ne.s32 %p2, %r5, 0;
  vote.sync.ballot.b32 %r6, %p2, -1;
  and.b32 %r7, %r6, 255;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r7;
  @%p1 st.shared.u8 [%r4], %r1;
}"""
    r = bankproof.kernel(ptx, block=64, language="ptx")
    (st,) = r.instructions
    assert (st.instructions, st.wavefronts) == (2, 2)
    t = simt.run(kernel_code(read_module(ptx), None), Launch((64, 1, 1)))
    inst = next(iter(t.instances.values()))
    assert inst.active.sum(axis=1).tolist() == [1, 1] and int(inst.offsets[0, 0]) == 0xAA


def test_misaligned_address_is_refuted():
    ptx = """
.visible .entry k()
{
  .shared .align 16 .b8 buf[4096];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 3;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r4];
}"""
    (ld,) = bankproof.kernel(ptx, block=32, language="ptx").instructions
    assert (ld.verdict, ld.rests_on) == ("refuted", "misaligned") and "lane 1" in ld.reason


def test_inlined_chain_user_line():
    ptx = """
.visible .entry k()
{
  .shared .align 4 .b8 buf[4096];
  .loc 1 3 0
  mov.u32 %r1, %tid.x;
  .loc 1 9 5
  .loc 2 40 7, function_name $L__info_string0, inlined_at 1 9 5
  .loc 2 12 3, function_name $L__info_string1, inlined_at 2 40 7
  mov.u32 %r3, buf;
  st.shared.u32 [%r3], %r1;
}
.file 1 "user.cu"
.file 2 "lib/header.hpp"
"""
    (st,) = bankproof.kernel(ptx, block=32, language="ptx").instructions
    assert (st.location.file, st.location.line) == ("user.cu", 9)
    assert (st.inlined_from.file, st.inlined_from.line) == ("lib/header.hpp", 12)


def test_ptxas_drops_a_load_nothing_reads():
    """Measured: ptxas removes a shared load whose result is overwritten (or the kernel ends) before
    anything reads it; a load whose result is stored stays."""
    ptx = """
.visible .entry k()
{
  .shared .align 16 .b8 buf[4096];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 7;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r5}, [%r4];
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r5}, [%r3];
  st.global.u32 [%rd1], %r5;
  ld.shared.u32 %r6, [%r4];
  ret;
}"""
    first, second, last = bankproof.kernel(ptx, block=32, language="ptx").instructions
    assert (first.instructions, first.wavefronts, "removes" in first.reason) == (0, 0, True)
    assert (second.instructions, last.instructions) == (1, 0)


def test_ptxas_merges_and_reuses():
    ptx = """
.visible .entry k()
{
  .shared .align 16 .b8 buf[64];
  ld.shared.u32 %r1, [buf+12];
  ld.shared.u32 %r2, [buf+16];
  ld.shared.u32 %r3, [buf+20];
  ld.shared.u32 %r4, [buf+24];
  ld.shared.u32 %r5, [buf+28];
  ld.shared.u32 %r6, [buf+32];
  ld.shared.u32 %r7, [buf+36];
  ld.shared.u32 %r8, [buf+12];
}"""
    code = kernel_code(read_module(ptx), None)
    runs, again = ptxas.scan(code)
    assert again == [ptxas.Reuse(7, 0)]
    t = simt.run(code, Launch((32, 1, 1)))
    got = [(m.members, m.size) for m in ptxas.merges(runs, dict(t.instances))]
    assert got == [((1, 2, 3, 4), 16), ((5, 6), 8)]  # LDS at +12, LDS.128 at +16, LDS.64 at +32
    r = analyse(source_from_ptx(ptx, "k.ptx"), Launch((32, 1, 1)))
    assert [i.instructions for i in r.instructions] == [1, 1, 0, 0, 0, 1, 0, 0]
    assert [i.instr for i in r.instructions][:2] == ["ld32", "ld128"]


def test_several_kernels_need_a_name():
    two = LOOP + LOOP.replace(".entry k(", ".entry k2(").replace("k_param_0", "k2_param_0")
    with pytest.raises(InputError, match="must name one kernel of the module: k, k2"):
        bankproof.kernel(two, block=32, language="ptx")
    r = bankproof.kernel(two, kernel="k2", block=32, args={"k2_param_0": 1}, language="ptx")
    assert r.kernel == "k2"


def test_dynamic_shared_after_static():
    ptx = """
.extern .shared .align 16 .b8 dyn[];
.visible .entry k()
{
  .shared .align 4 .b8 small[20];
  mov.u32 %r1, dyn;
  st.shared.u32 [%r1], %r1;
}"""
    r = bankproof.kernel(ptx, block=32, dynamic_smem=64, language="ptx")
    assert r.shared_symbols == {"small": 0, "dyn": 32}


def test_second_engine_proves_from_the_bases():
    """An F2-affine instruction is decided again by verify's engines (Lemma 9.4, Z3) from its
    bases; counts agree with the enumeration, and a conflict names its bad byte-address bits."""
    from bankproof.verifier.kernel import linear

    text = LOOP.replace("shl.b32 %r3, %r1, 2;", "shl.b32 %r3, %r1, 7;").replace("%r2, 7;", "%r2, 12;")
    text = text.replace(
        "st.shared.u32 [%r5], %r2;", "ld.shared.u32 %r6, [%r5];"
    )  # a store must cover its tensor
    r = bankproof.kernel(text.replace("buf[4096]", "buf[32768]"), block=32, args={"0": 4}, language="ptx")
    (st,) = r.instructions
    assert (st.verdict, st.wavefronts) == ("refuted", 128)
    assert (
        st.proof.engine in ("z3", "algebra")
        and "every lane, warp and iteration bit" in st.engines["enumeration"].reason
    )
    assert st.bad_direction.startswith("byte-address bits 7 (128)")
    lanes = np.arange(32)
    assert (
        linear.bases(np.stack([lanes * 4 + (lanes % 3)]), np.array([0]), np.array([0])) is None
    )  # not affine


def test_analyses_do_not_share_state():
    """A generic-pointer kernel analysed after another gives the same answer as alone (a cache
    keyed by an object's id once returned another kernel's shared pointers)."""
    for _ in range(3):
        bankproof.kernel(LOOP, block=64, args={"0": 5}, language="ptx")
        test_generic_pointer_to_a_shared_symbol()


def test_disagreement_is_exit_4(monkeypatch):
    """Were the layout's engines to count otherwise than the enumeration, the kernel says so."""
    from bankproof.verifier.kernel import crosscheck, linear

    real = linear.verify_instruction

    def off_by_one(*a, **k):
        acc, elem = real(*a, **k)
        return type(acc)(**{**acc.__dict__, "wavefronts": acc.wavefronts + 1}), elem

    monkeypatch.setattr(linear, "verify_instruction", off_by_one)
    assert crosscheck.linear is linear
    r = bankproof.kernel(LOOP, block=32, args={"0": 2}, language="ptx")
    assert r.verdict == "disagree" and r.exit_code == 4
    assert "the layout's engines" in r.instructions[0].reason


def test_a_memory_operand_is_not_a_destination():
    """``mbarrier.init [%r1], 1`` writes shared memory, not ``%r1`` (it once clobbered the base
    register and made a later stmatrix look misaligned)."""
    ptx = """
.visible .entry k()
{
  .shared .align 1024 .b8 buf[8192];
  mov.u32 %r1, buf;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  mov.u32 %r2, %tid.x;
  and.b32 %r3, %r2, 7;
  shl.b32 %r4, %r3, 7;
  add.s32 %r5, %r1, %r4;
  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r5+1024], {%r6};
}"""
    (mb, st) = bankproof.kernel(ptx, block=32, language="ptx").instructions
    assert (st.verdict, st.rests_on, st.wavefronts) == ("refuted", "measured", 8)


def test_a_branch_that_skips_nothing_needed_is_followed():
    """A branch on loaded data over code that computes no address and touches no shared memory
    (libdevice's special cases) is followed either way; one over shared work makes what follows unknown."""
    ptx = """
.visible .entry k(.param .u64 k_param_0)
{
  .shared .align 4 .b8 buf[4096];
  ld.param.u64 %rd1, [k_param_0];
  ld.global.f32 %f1, [%rd1];
  setp.lt.f32 %p1, %f1, 0f00000000;
  @%p1 bra $L_skip;
  add.f32 %f2, %f1, %f1;
$L_skip:
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
}"""
    r = bankproof.kernel(ptx, block=32, language="ptx")
    assert r.verdict == "proved" and r.instructions[0].wavefronts == 1
    worse = ptx.replace("  add.f32 %f2, %f1, %f1;", "  st.shared.u32 [buf], %r9;")
    r = bankproof.kernel(worse, block=32, language="ptx")
    assert r.verdict == "unknown" and r.instructions[-1].wavefronts is None


CALLS = """
.func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
  .reg .b32 %r<5>;
  ld.param.u32 %r1, [f_param_0];
  shl.b32 %r2, %r1, 7;
  mov.u32 %r3, buf;
  add.s32 %r4, %r3, %r2;
  ld.shared.u32 %r2, [%r4];
  st.global.u32 [%rd1], %r2;
  st.param.b32 [func_retval0+0], %r1;
  ret;
}
.visible .entry k()
{
  .reg .b32 %r<9>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra $L_skip;
  { .param .b32 param0; st.param.b32 [param0+0], %r1; .param .b32 retval0;
    call.uni (retval0), f, (param0); ld.param.b32 %r2, [retval0+0]; }
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, buf;
  add.s32 %r5, %r4, %r3;
  st.shared.u32 [%r5], %r2;
$L_skip:
  ret;
}
.shared .align 4 .b8 buf[8192];
"""


def test_called_device_functions_are_followed():
    """A ``.func`` called by half the warp: its argument arrives through ``.param``, its shared load
    is counted at the address it computes (16 lanes 128 bytes apart: 16 wavefronts), its result
    comes back to the caller (whose store then uses it: 4-byte stride, one wavefront)."""
    r = bankproof.kernel(CALLS, block=32, language="ptx")
    store, load = r.instructions  # the kernel's body first, then the appended function's
    assert (load.instr, load.instructions, load.wavefronts, load.verdict) == ("ld32", 1, 16, "refuted")
    assert (store.instr, store.wavefronts, store.verdict) == ("st32", 1, "proved")
    assert r.unknown == ()


def test_a_call_to_an_undefined_function_is_named():
    text = CALLS.replace("call.uni (retval0), f, (param0);", "call.uni (retval0), g, (param0);")
    r = bankproof.kernel(text, block=32, language="ptx")
    assert any("calls to g are not followed" in n for n in r.notes)
    assert r.instructions[-1].wavefronts is None  # its result is unknown: the store's address too


def test_recursion_is_not_followed_forever():
    text = CALLS.replace("  st.global.u32 [%rd1], %r2;", "  { .param .b32 param0; st.param.b32 [param0+0], %r1;"
                         " .param .b32 retval0; call.uni (retval0), f, (param0); }\n  st.global.u32 [%rd1], %r2;")  # fmt: skip
    r = bankproof.kernel(text, block=32, language="ptx")
    store = r.instructions[0]  # the caller's store after the call: reached only through the returns
    assert "recursion" in r.unknown[0] and store.wavefronts is None and store.verdict == "unknown"


SCHEDULED = """
.visible .entry k(.param .u32 k_param_0)
{
  .shared .align 4 .b8 slot[4];
  .shared .align 4 .b8 buf[8192];
  ld.param.u32 %r9, [k_param_0];
  mov.u32 %r1, %tid.x;
  setp.ne.s32 %p1, %r1, 0;
  mov.u32 %r2, slot;
  @%p1 bra $L_wait;
  st.shared.u32 [%r2], %r9;
$L_wait:
  bar.sync 0;
  ld.shared.u32 %r3, [%r2];
  mul.lo.s32 %r4, %r1, %r3;
  mov.u32 %r5, buf;
  add.s32 %r6, %r5, %r4;
  ld.shared.u32 %r7, [%r6];
  st.global.u32 [%rd1], %r7;
  ret;
}"""


def test_a_value_passed_through_shared_memory_is_known():
    """Thread 0 writes a stride to shared memory, every thread reads it back and indexes with it (a
    tile scheduler's pattern): the read-back value is known, so the indexed load is counted."""
    for stride, wavefronts in ((4, 1), (128, 32)):
        r = bankproof.kernel(SCHEDULED, block=32, args={"0": stride}, language="ptx")
        store, slot, load = r.instructions
        assert (load.wavefronts, r.unknown) == (wavefronts, ())
    clobbered = SCHEDULED.replace(
        "$L_wait:\n  bar.sync 0;", "$L_wait:\n  bar.sync 0;\n  atom.shared.add.u32 %r8, [%r2], 1;"
    )
    r = bankproof.kernel(clobbered, block=32, args={"0": 4}, language="ptx")
    assert r.instructions[-1].wavefronts is None  # an atomic changed the slot: not known any more


def test_a_stored_value_skipped_by_an_unknown_branch_is_not_known():
    """A branch on a value the machine does not know (a loaded flag) skips the arithmetic of the value
    thread 0 stores: followed either way, the stored value is unknown, so the load it indexes is not
    counted (never counted with the value of one way only)."""
    flagged = SCHEDULED.replace(
        "  @%p1 bra $L_wait;\n  st.shared.u32 [%r2], %r9;",
        "  @%p1 bra $L_wait;\n  ld.global.u32 %r10, [%rd2];\n  setp.ne.s32 %p2, %r10, 0;\n"
        "  @%p2 bra $L_keep;\n  shl.b32 %r9, %r9, 5;\n$L_keep:\n  st.shared.u32 [%r2], %r9;",
    )
    r = bankproof.kernel(flagged, block=32, args={"0": 4}, language="ptx")
    assert (r.instructions[-1].wavefronts, r.instructions[-1].verdict, r.verdict) == (
        None,
        "unknown",
        "unknown",
    )
    assert (
        bankproof.kernel(SCHEDULED, block=32, args={"0": 4}, language="ptx").instructions[-1].wavefronts == 1
    )
