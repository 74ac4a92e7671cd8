"""SASS is what is counted (issue 55, item 1): each PTX shared instruction reconciled with the SASS
ptxas builds (:mod:`bankproof.verifier.kernel.sass`, :mod:`~bankproof.verifier.kernel.reconcile`):
a dead ldmatrix inside a loop counts nothing, a float atomicAdd rewritten as a compare-and-swap
loop is unknown with the SASS named, loads ptxas merges count as the merged access (where the
measured rules would not have merged them), ``@!PT`` placeholders never count, line-table slop
between neighbours is re-attributed, and SASS the PTX does not explain is a disagreement (exit 4).
The kernels are this file's own PTX (tests/data/sass/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bankproof.verifier.kernel import reconcile, sass, sass_effects
from bankproof.verifier.kernel.sass import SassOp
from bankproof.verifier.ptx.module import Op

import bankproof

DATA = Path(__file__).resolve().parent / "data" / "sass"
needs_tools = pytest.mark.skipif(sass.tools() is None, reason="ptxas and nvdisasm are not installed")


def _kernel(name: str, block: int = 32):
    return bankproof.kernel((DATA / f"{name}.ptx").read_text(), block=block, language="ptx")


def _by_line(r):
    return {i.ptx_line: i for i in r.instructions}


@needs_tools
@pytest.mark.slow
def test_the_tools_are_the_devices_ptxas_and_a_newer_nvdisasm():
    t = sass.tools()
    assert t.ptxas_version == "V13.0.88" and t.nvdisasm_version >= "V13.0"


@needs_tools
@pytest.mark.slow
def test_a_dead_ldmatrix_inside_a_loop_counts_nothing():
    """Four iterations: the ldmatrix nothing reads is gone from the SASS (0 instructions), the one
    read is unrolled into four LDSM.16.MT88.4 (4 instructions, 16 wavefronts)."""
    r = _kernel("dead")
    lines = _by_line(r)
    assert (lines[22].instructions, lines[22].wavefronts) == (0, 0)
    assert "ptxas removed it" in lines[22].reason
    assert (lines[23].instructions, lines[23].wavefronts, lines[23].instr) == (4, 16, "ldsm.x4.trans")
    assert r.verdict == "proved" and any("read from the SASS" in n for n in r.notes)


@needs_tools
@pytest.mark.slow
def test_a_float_shared_atomic_add_is_a_cas_loop_and_unknown():
    r = _kernel("atomf")
    line = _by_line(r)[17]
    assert r.verdict == "unknown" and r.exit_code == 3 and line.wavefronts is None
    assert line.reason.startswith("ptxas rewrites it as a compare-and-swap loop (LDS, ATOMS.CAST.SPIN)")
    assert f"at least {line.instructions} warp passes (each an LDS and an ATOMS.CAST)" in line.reason
    assert not r.unknown  # the loop's LDS is the atomic's, not an orphan


@needs_tools
@pytest.mark.slow
def test_loads_merged_where_the_rules_would_not_count_as_the_sass():
    """16 threads (no whole warp shows the alignment, so the measured rules keep four LDS); ptxas
    proves it and runs one LDS.128: counted as one 128-bit load."""
    r = _kernel("merge16", block=16)
    lines = _by_line(r)
    assert (lines[16].instr, lines[16].instructions, lines[16].wavefronts) == ("ld128", 1, 2)
    assert all(
        lines[n].instructions == 0 and "LDS.128 of PTX line 16" in lines[n].reason for n in (17, 18, 19)
    )


def test_without_the_sass_the_same_loads_are_predicted_apart_and_say_so(monkeypatch):
    monkeypatch.setattr(sass, "disassemble_cached", lambda *a: None)
    r = _kernel("merge16", block=16)
    assert [_by_line(r)[n].instructions for n in (16, 17, 18, 19)] == [1, 1, 1, 1]
    assert sass_effects.NO_SASS in r.notes


@needs_tools
@pytest.mark.slow
def test_placeholders_after_a_copy_wait_never_count():
    r = _kernel("cpwait")
    assert not r.unknown and {i.ptx_line: i.instructions for i in r.instructions} == {18: 1, 24: 1}


def _op(i: int, line: int, opcode: str, addr: str) -> Op:
    return Op(
        i, line, opcode, ("%r9", addr) if opcode.startswith("ld") else (addr, "%r9"), None, 0, None, None
    )


def test_line_table_slop_between_neighbours_is_reattributed():
    """ptxas gives line 5 both loads ([R5] and [R5+0x8]) and line 6 none: the immediates match the
    PTX offsets one to one, so each keeps its own."""
    ops = [_op(0, 5, "ld.shared.u32", "[%rd1]"), _op(1, 6, "ld.shared.u32", "[%rd1+8]")]
    sass_ops = [SassOp("k", 0, 5, "", "LDS", "R6, [R5]"), SassOp("k", 16, 5, "", "LDS", "R7, [R5+0x8]")]
    r = reconcile.reconcile(ops, {0: ("lsu", "ld32"), 1: ("lsu", "ld32")}, sass_ops, "k")
    assert [f.kind for f in r.fates.values()] == ["kept", "kept"]


def test_slop_that_no_offset_explains_is_unknown():
    ops = [_op(0, 5, "ld.shared.u32", "[%rd1]"), _op(1, 6, "ld.shared.u32", "[%rd1+8]")]
    sass_ops = [SassOp("k", 0, 5, "", "LDS", "R6, [R5]"), SassOp("k", 16, 5, "", "LDS", "R7, [R5+0x20]")]
    r = reconcile.reconcile(ops, {0: ("lsu", "ld32"), 1: ("lsu", "ld32")}, sass_ops, "k")
    assert [f.kind for f in r.fates.values()] == ["split", "split"]
    assert "which runs which is not known" in r.fates[1].why


def test_unrolled_copies_of_one_access_stay_kept():
    ops = [_op(0, 5, "ld.shared.u32", "[%rd1]")]
    sass_ops = [SassOp("k", 16 * n, 5, "", "LDS", f"R6, [R5+{4 * n:#x}]") for n in range(4)]
    r = reconcile.reconcile(ops, {0: ("lsu", "ld32")}, sass_ops, "k")
    assert r.fates[0].kind == "kept"


def test_sass_of_another_kind_is_a_disagreement_and_exit_4(monkeypatch):
    """A store at a load's line: nothing explains it, so the kernel disagrees (exit 4)."""
    text = (DATA / "merge16.ptx").read_text()
    fake = sass.Disassembly(
        sass.Tools("ptxas", "nvdisasm", "V13.0.88", "V13.2.86"),
        "sm_90a",
        (SassOp("k", 0, 14, "", "STS.128", "[R0], R4"), SassOp("k", 16, 16, "", "STS", "[R0], R4")),
    )
    monkeypatch.setattr(sass, "disassemble_cached", lambda *a: fake)
    r = bankproof.kernel(text, block=32, language="ptx")
    line = _by_line(r)[16]
    assert r.verdict == "disagree" and r.exit_code == 4 and line.rests_on == reconcile.DISAGREES
    assert line.reason == "the PTX's ld32 runs as STS in the SASS, which bankproof cannot explain"


def test_sass_with_no_ptx_origin_makes_the_kernel_unknown(monkeypatch):
    text = (DATA / "merge16.ptx").read_text()
    fake = sass.Disassembly(
        sass.Tools("ptxas", "nvdisasm", "V13.0.88", "V13.2.86"),
        "sm_90a",
        (SassOp("k", 0, 14, "", "STS.128", "[R0], R4"), SassOp("k", 16, 16, "", "LDS.128", "R4, [R0]"),
         SassOp("k", 32, 21, "", "LDS", "R4, [R0]")),
    )  # fmt: skip
    monkeypatch.setattr(sass, "disassemble_cached", lambda *a: fake)
    r = bankproof.kernel(text, block=32, language="ptx")
    assert r.verdict == "unknown" and r.unknown == (
        "PTX line 21: the SASS runs LDS, which no PTX shared instruction there explains",
    )


def test_ptx_lines_survive_the_rewrite_for_ptxas():
    text = (DATA / "dead.ptx").read_text()
    out = sass.with_ptx_lines(text).split("\n")
    loc = [int(line.split()[2]) for line in out if line.startswith(".loc 1 ")]
    assert 22 in loc and 23 in loc and out[-1] == '.file 1 "ptx"'
    assert all(text.split("\n")[n - 1].strip() for n in loc)


def test_the_listing_parser_reads_guards_and_lines():
    ops = sass.parse('.text.k:\n //## File "ptx", line 9\n /*0040*/ @P0 LDSM.16.M88.4 R4, [R2] ;\n')
    assert ops == [SassOp("k", 0x40, 9, "@P0", "LDSM.16.M88.4", "R4, [R2]")]
    assert sass.sass_kind("STSM.16.MT88.2") == ("lsu", "stsm.x2.trans")
    assert sass.sass_kind("LDS.U8") == ("lsu", "ld8") and sass.sass_kind("ATOMS.POPC.INC.32")[0] == "atomic"


def test_a_statement_over_several_lines_gets_one_line_mark():
    """A call's operands run over lines (printf's vprintf): the .loc goes before the statement only
    (ptxas refused a mark between its lines, and the SASS was lost for the whole kernel)."""
    ptx = ".visible .entry k()\n{\n call.uni (retval0),\n vprintf,\n (param0);\n ret;\n}"
    out = sass.with_ptx_lines(ptx).split("\n")
    assert out[2:8] == [
        ".loc 1 3 0",
        " call.uni (retval0),",
        " vprintf,",
        " (param0);",
        ".loc 1 6 0",
        " ret;",
    ]


@needs_tools
@pytest.mark.slow
def test_a_cas_loop_leaves_the_loads_total_unknown():
    """The CAS loop's LDS runs once per pass (timing): the kernel's ld and atomic totals are unknown,
    never the PTX's count of its own loads."""
    r = _kernel("atomf")
    totals = {t.kind: (t.instructions, t.wavefronts) for t in r.totals}
    assert totals["ld"] == (None, None) and totals["atomic"][0] is None
    assert _by_line(r)[17].rests_on == reconcile.LOOPED


@pytest.mark.triton
@pytest.mark.compile
@pytest.mark.slow
@needs_tools
def test_every_triton_kernel_of_the_built_in_corpus_reconciles(corpus_entries):
    """Triton 3.9's sm90 PTX of the built-in corpus, built by Triton's own ptxas and read back: no
    PTX shared instruction's SASS is unexplained (no disagreement), no SASS shared instruction
    lacks a PTX origin, and every kernel's SASS was read."""
    from concurrent.futures import ThreadPoolExecutor

    from bankproof.verifier.kernel.analyse import source_from_ptx
    from bankproof.verifier.kernel.sites import classify, shared_pointers
    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.jobs import compile_kernel

    configs = {c["name"]: c for c in builtin_configs()}
    todo = [(e.name, compile_kernel(configs[e.config], e.arch)[1]) for e in corpus_entries
            if e.compiled and e.arch == "sm90"]  # fmt: skip
    with ThreadPoolExecutor(2) as pool:  # ptxas runs as its own process: two at a time
        built = list(pool.map(lambda t: sass.disassemble(t[1], "sm90"), todo))
    checked = edits = 0
    for (name, ptx), dis in zip(todo, built, strict=True):
        src = source_from_ptx(ptx, "k.ptx")
        assert dis is not None and not dis.error, (name, dis and dis.error)
        shared = shared_pointers(src.code)
        classes = {op.index: c for op in src.code.body if (c := classify(op, shared)) is not None}
        r = reconcile.reconcile(src.code.body, classes, list(dis.ops), src.code.name)
        assert not r.orphans and not [f for f in r.fates.values() if f.kind == "disagree"], name
        edits += sum(
            classes[i][0] == "tensormap" and f.kind == "rewritten" and "STS" in " ".join(f.sass)
            for i, f in r.fates.items()
        )
        checked += 1
    assert checked >= 20 and edits >= 1  # a tensor map edited in shared memory runs as LDS/STS


def test_a_local_depot_is_not_taken_for_a_line_mark():
    """``.local`` starts like ``.loc``: the depot's declaration stays (ptxas refused the kernel)."""
    ptx = ".visible .entry k()\n{\n .local .align 16 .b8 __local_depot0[128];\n .loc 1 5 0\n ret;\n}"
    out = sass.with_ptx_lines(ptx).split("\n")
    assert " .local .align 16 .b8 __local_depot0[128];" in out and " .loc 1 5 0" not in out
