"""``bankproof triton corpus``: the built-in corpus compiles with Triton on the CPU (>= 40
configurations per arch), matches the committed baseline, and a lowered baseline entry fails."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest
from bankproof.verifier.cli.main import main
from bankproof.verifier.triton import corpus
from bankproof.verifier.triton.scan_records import ScanReport

from lab.findings import findings_markdown

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra"),
    pytest.mark.compile,
]

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "data" / "triton_corpus_baseline.json"


@pytest.fixture(scope="module")
def entries(corpus_entries):
    """The corpus's entries as their JSON (what ``--json`` and the results store hold)."""
    return [e.to_dict() for e in corpus_entries]


@pytest.fixture(scope="module")
def records(corpus_entries):
    """The same entries as the records the corpus functions take."""
    return corpus_entries


def test_corpus_matches_the_committed_baseline(entries, records, capsys):
    for arch in ("sm80", "sm90", "sm100"):
        compiled = [e for e in entries if e["arch"] == arch and "report" in e]
        assert len(compiled) >= 40, arch
    baseline = dict(corpus.load_baseline(str(BASELINE)))
    assert corpus.compare(records, baseline) == ([], [])
    assert corpus.flat_accesses(records) == baseline
    with capsys.disabled():
        n = len(corpus.flat_accesses(records))
        gaps = sum(1 for e in entries for b in e.get("report", {}).get("buffers", []) if b["gap"])
        print(f"\ncorpus: {len(entries)} (config, arch) pairs, {n} accesses, {gaps} buffers above optimum")


def test_every_buffer_has_an_optimum(entries):
    """Subslice readers are extended to the whole buffer (the other subslices become register
    bits), so the §5.4 optimum exists for the mixed-precision A buffer too: equal to Triton's."""
    unknown = [(e["config"], b["buffer"], b.get("reason")) for e in entries for b in e.get("report", {}).get(
        "buffers", []) if b["optimal_wavefronts"] is None]  # fmt: skip
    assert unknown == []
    (mixed,) = [b for e in entries if e["config"] == "matmul_mixed_f16xi8_64x64x64" and e["arch"] == "sm80"
                for b in e["report"]["buffers"] if b["buffer"] == "%a_22"]  # fmt: skip
    # with Triton's instructions (ld64 subslice reads) §5.4 cannot beat Triton's layout; with the
    # instructions searched too, a layout read with ld128 costs 384
    assert (mixed["wavefronts"], mixed["optimal_same_instructions"]) == (576, 576)
    assert (mixed["optimal_wavefronts"], mixed["gap"], mixed["better_instructions"][2]) == (384, 192, "ld128")


def test_suggested_layouts_cost_what_the_scan_says(entries):
    """Every (layout, instructions) the scan suggests, read back from its Triton notation and
    counted access by access, costs its reported optimum."""
    from bankproof.models.access import build_access
    from bankproof.models.hardware import evaluate
    from bankproof.models.notation import parse_layout
    from bankproof.verifier.triton.accesses import buffer_accesses, layouts_of
    from bankproof.verifier.triton.ttgir import read_ttgir

    checked = 0
    for e in entries:
        mod = None
        for b in e.get("report", {}).get("buffers", []):
            if not b.get("better_instructions"):
                continue
            mod = mod or read_ttgir(e["ttgir"])
            memory = parse_layout(b["better_layout"], b["shape"]).layout
            accs = [a for a in buffer_accesses(mod) if a.buffer == b["buffer"]]
            total = 0
            for a, instr in zip(accs, b["better_instructions"], strict=True):
                dist, _ = layouts_of(mod, a)
                acc = build_access(dist, memory, a.memdesc.elem_bits, a.kind, instr)
                total += int(evaluate(acc.instr, acc.addresses)[0].sum())
            assert total == b["optimal_wavefronts"], (e["config"], e["arch"], b["buffer"])
            checked += 1
    assert checked >= 5


def test_a_lowered_baseline_entry_is_named(records):
    baseline = dict(corpus.load_baseline(str(BASELINE)))
    key = sorted(baseline)[7]
    baseline[key] -= 1
    assert corpus.compare(records, baseline) == (
        [f"{key}: {baseline[key] + 1} wavefronts, baseline {baseline[key]}"],
        [],
    )


def test_an_access_the_run_no_longer_makes_is_removed_not_worse(records):
    """A baseline access whose compile ran but no longer makes it (fewer pipeline stages: fewer
    buffers) is reported as removed, and does not fail the gate as a regression."""
    baseline = dict(corpus.load_baseline(str(BASELINE)))
    compiled = sorted(baseline)[3].split(" ", 1)[0]
    gone = f"{compiled} no_such_buffer ttg.local_load #0"
    worse, removed = corpus.compare(records, {**baseline, gone: 12})
    assert (worse, removed) == ([], [f"{gone}: removed (baseline 12 wavefronts)"])
    other = "never_compiled@sm90 a:A ttg.local_load #0"  # its compile did not run: neither
    assert corpus.compare(records, {**baseline, other: 12}) == ([], [])


USER_KERNELS = """
import triton
import triton.language as tl

@triton.jit
def copy_t(x_ptr, y_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(x_ptr + r[:, None] * B + r[None, :])
    tl.store(y_ptr + r[:, None] * B + r[None, :], tl.trans(x))

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    r = tl.arange(0, B)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, K, B):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :])
        b = tl.load(b_ptr + (k + r)[:, None] * B + r[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * B + r[None, :], acc.to(tl.float16))

CONFIGS = [
    {"name": "user_mm", "kernel": "mm", "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
     "K": "i32", "B": "constexpr"}, "constexprs": {"B": 64}, "num_warps": 4, "num_stages": 2},
]
"""


def test_cli_user_kernels_baseline_round_trip(tmp_path, capsys):
    kernels = tmp_path / "kernels.py"
    kernels.write_text(USER_KERNELS)
    base = tmp_path / "base.json"
    args = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels), "--baseline", str(base)]
    assert main([*args, "--update-baseline"]) == 0
    assert "sm80: 1 configurations, 1 compiled" in capsys.readouterr().out
    assert main(args) == 0
    data = json.loads(base.read_text())
    key = sorted(data["accesses"])[0]
    data["accesses"][key] -= 1
    base.write_text(json.dumps(data))
    assert main(args) == 1
    assert f"worse than baseline: {key}" in capsys.readouterr().err
    data["accesses"][key] += 1  # back as it was, and one access the compile no longer makes
    gone = key.split(" ", 1)[0] + " gone ttg.local_load #0"
    data["accesses"][gone] = 8
    base.write_text(json.dumps(data))
    assert main(args) == 0  # removed is not worse
    err = capsys.readouterr().err
    assert f"removed since the baseline: {gone}: removed (baseline 8 wavefronts)" in err
    assert "0 worse than baseline, 1 removed since it" in err
    assert main(args[:-2]) == 0  # no baseline: no comparison claimed
    assert "no baseline compared" in capsys.readouterr().err


def test_baseline_keys_hold_across_unrelated_edits_and_fewer_stages(tmp_path):
    """Keys name buffers as the source does (with their dot role) and accesses by op, loop depth
    and occurrence: an unrelated edit that renumbers every SSA value and moves every source line
    keeps every key and count; two pipeline stages instead of three remove prologue copies, the
    loop's keep their keys, and the gate reports them removed, not worse."""
    edited = USER_KERNELS.replace(
        "    acc = tl.zeros((B, B), dtype=tl.float32)\n",
        "    # an unrelated edit: more code before the loop\n"
        "    tl.store(c_ptr + B * B + r, r.to(tl.float16))\n"
        "    acc = tl.zeros((B, B), dtype=tl.float32)\n",
    )
    runs = {}
    for name, text, stages in (("before", USER_KERNELS, 3), ("edited", edited, 3), ("two", USER_KERNELS, 2)):
        path = tmp_path / f"{name}.py"
        path.write_text(text.replace('"num_stages": 2', f'"num_stages": {stages}'))
        (entry,) = corpus.run_corpus(corpus.load_kernels_file(str(path)).CONFIGS, ["sm80"], str(path))
        runs[name] = (entry, corpus.flat_accesses([entry]))
    ssa = [{b.buffer for b in runs[n][0].report.buffers} for n in ("before", "edited")]
    assert ssa[0] != ssa[1]  # the edit renumbered the buffers' SSA values
    before = runs["before"][1]
    assert runs["edited"][1] == before
    copies = ["ttg.async_copy_global_to_local #0", "ttg.async_copy_global_to_local #1",
              "ttg.async_copy_global_to_local in loop #0"]  # fmt: skip
    loads = ["ttg.local_load #0"] + [f"ttg.local_load in loop #{k}" for k in range(4)]
    assert sorted(before) == [f"user_mm@sm80 {b} {a}" for b in ("a:A", "b:B") for a in copies + loads]
    two = runs["two"][1]
    assert set(two) < set(before) and all(two[k] == before[k] for k in two)
    worse, removed = corpus.compare([runs["two"][0]], before)
    assert worse == [] and removed == [
        f"{k}: removed (baseline {before[k]} wavefronts)"
        for k in (f"user_mm@sm80 {b} ttg.async_copy_global_to_local #1" for b in ("a:A", "b:B"))
    ]


def test_gap_lines_name_each_buffer_once(records):
    """What ``--require-optimal`` and the layout gate print: one line per buffer, named as the
    source names it."""
    gaps, layout = corpus.gap_lines(records)
    mixed = "matmul_mixed_f16xi8_64x64x64@sm80 a:A (%a_22): 576 wavefronts, optimum 384"
    assert mixed in gaps and len(gaps) == len(set(gaps))
    assert not any(line.startswith("matmul_mixed_f16xi8_64x64x64@sm80 a:A") for line in layout)


def test_cli_exit_4_when_the_lowering_differs(tmp_path, capsys, monkeypatch):
    """If Triton's PTX moves an access with other instructions than the scan counted (a new
    Triton lowering, say), the counts may be wrong: say so and exit 4, like engines disagreeing."""
    from bankproof.verifier.triton import ledger

    kernels = tmp_path / "kernels.py"
    kernels.write_text(USER_KERNELS)
    args = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels)]
    assert main(args) == 0
    assert "instructions differ" not in capsys.readouterr().err
    # a PTX shared-memory instruction that no TTGIR op owns is a leftover: the ledger names it
    ptx = '.visible .entry k()\n.reqntid 32\n{\n.loc 1 9 1\n mov.u32 %r1, %tid.x;\n shl.b32 %r2, %r1, 2;\n st.shared.b32 [%r2], %r1;\n}\n.file 1 "k.py"'
    ttgir = 'module {\n  tt.func public @k() {\n    tt.return loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n#loc = loc("k.py":1:0)'
    empty = ScanReport(file="k.ttgir", target=None, num_warps=1, buffers=(), conversions=())
    leftover = ledger.build(empty, ttgir, ptx).unattributed
    assert leftover == ("k.py:9:1: 1 st32 with no TTGIR op to own it",)
    real = ledger.build
    monkeypatch.setattr(ledger, "build", lambda *a, **k: replace(real(*a, **k), unattributed=leftover))
    assert main(args) == 4
    err = capsys.readouterr().err
    assert (
        "instructions differ from Triton's PTX: user_mm@sm80 unattributed: k.py:9:1: 1 st32 with no TTGIR op"
        in err
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--arch", "sm70"],
            "triton corpus: --arch must be among sm80, sm90, sm100, gfx942, gfx950, got sm70",
        ),
        (["--baseline", "/nonexistent.json"], "corpus: --baseline cannot be read"),
    ],
)
def test_corpus_bad_input_exit_2(capsys, args, message):
    assert main(["triton", "corpus", *args]) == 2
    assert message in capsys.readouterr().err


def test_findings_document_is_current(entries):
    """docs/explanation/triton-findings.md is exactly what the corpus produces now."""
    doc = (ROOT / "docs" / "explanation" / "triton-findings.md").read_text()
    assert doc == findings_markdown(entries)
    assert "Buffers above the optimum bankproof can reach by changing only the shared layout: 0." in doc


def test_the_builtin_corpus_checks_every_access(entries, records, capsys):
    """Every configuration compiles for the arches it is written for (fp8 dots: sm90 and sm100
    only), every access is analysed and every optimum known, and every shared-memory instruction of
    every kernel's PTX is owned by a ledger entry: no leftover, no disagreement, nothing unknown."""
    fp8 = {e["arch"] for e in entries if e["config"].startswith("matmul_fp8")}
    assert fp8 == {"sm90", "sm100"}
    assert corpus.unchecked(records) == []
    compiled = [e for e in entries if "report" in e]
    assert [(e["config"], e["arch"], e["lowering"]) for e in compiled if e["lowering"]] == []
    kinds: dict[str, int] = {}
    for e in compiled:
        for x in e["ledger"]["entries"]:
            kinds[x["kind"]] = kinds.get(x["kind"], 0) + len(x["ptx_lines"])
    desc = [e["descriptors"] for e in compiled if "descriptors" in e]
    checked = sum(d["checked"] for d in desc)
    with capsys.disabled():
        print(f"\nledger: PTX shared-memory instructions by kind over {len(compiled)} kernels: {kinds}")
        print(
            f"MMA descriptors: {checked} in {len(desc)} sm90/sm100 kernels, each equal to its nvmma_shared operand"
        )
    assert checked >= 1000 and all(d["agree"] == d["checked"] and not d["undecided"] for d in desc)
    assert {"buffer", "scratch", "descriptor", "tma", "mma", "mbarrier", "tensormap", "tmem"} <= set(kinds)


def test_corpus_gate_exit_3_on_what_it_could_not_check(tmp_path, capsys):
    """A configuration that does not compile is named and exits 3 unless --allow-unknown."""
    kernels = tmp_path / "kernels.py"
    kernels.write_text(
        USER_KERNELS.replace(
            "CONFIGS = [",
            'CONFIGS = [\n    {"name": "broken", "kernel": "mm", "signature": {"a_ptr": "*fp16"}, "num_warps": 4},',
        )
    )
    args = ["triton", "corpus", "--arch", "sm80", "--kernels", str(kernels)]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "not checked: broken@sm80: not compiled (" in err
    assert main([*args, "--allow-unknown"]) == 0


def test_tma_store_epilogue_is_stmatrix_on_sm90(entries):
    """A TMA matmul's epilogue tile goes through shared memory: Triton 3.9.0 writes it with
    ``stmatrix.x4`` on sm90 (its PTX, checked by the lowering comparison) and ``st.shared.v4`` on
    sm100; the scan counts it with the same instruction."""
    stores = {
        (e["config"], e["arch"]): [a["instr"] for b in e["report"]["buffers"] for a in b["accesses"]]
        for e in entries
        if e["config"].startswith("matmul_tma_") and "report" in e
    }
    assert len(stores) == 14
    for (config, arch), instrs in stores.items():
        assert ("stsm.x4" if arch == "sm90" else "st128") in instrs, (config, arch, instrs)
        assert "stsm.x4" not in instrs or arch == "sm90", (config, arch, instrs)
    assert all(not e.get("lowering") for e in entries if e["config"].startswith("matmul_tma_"))


def test_user_kernels_of_today_scan_whole(capsys):
    """examples/triton_kernels_hopper.py (a TMA matmul, a persistent warp-specialized matmul, a
    cross-warp reduction, a cumsum) exits 0 with every PTX shared-memory instruction owned; the
    text shows the stmatrix epilogue, the scratch, and the warp-specialize partitions."""
    args = ["triton", "corpus", "--kernels", str(ROOT / "examples" / "triton_kernels_hopper.py")]
    assert main(args) == 0
    out = capsys.readouterr().out
    sm90 = out.split("sm90:")[1].split("sm100:")[0]
    assert "tma_matmul_128x128x64.py" not in sm90
    assert "ttg.local_alloc (buffer) stsm.x4 x64 x1: 256 wavefronts (ideal 256)" in sm90
    assert "tt.reduce (scratch) st128" in sm90 and "tt.scan (scratch) ld128" in sm90
    assert "ttg.warp_specialize (scratch) ld8" in out.split("sm100:")[1]
    assert main([*args, "--json", "--arch", "sm100"]) == 0
    result = json.loads(capsys.readouterr().out)
    ws = next(e for e in result["entries"] if e["config"].startswith("persistent_ws"))
    led = ws["ledger"]
    assert led["threads"] > 128 and not led["unattributed"] and not led["disagreements"]
    state = [x for x in led["entries"] if x["op"] == "ttg.warp_specialize" and x["instr"] == "ld8"]
    assert [(x["instructions"], x["executions"]) for x in state] == [(4, 2)]  # 4 worker warps, 2 stores
    loads = [x for x in led["entries"] if x["instr"] == "tma.load"]  # the loader partition's K loop
    assert loads and all(x["loops"] and x["loops"][-1]["bounds"].startswith("for 0 to %K") for x in loads)


def test_no_reported_optimum_is_above_a_plain_layout(entries):
    """Every buffer's reported optimum is at most what the unswizzled row-major and column-major
    layouts, and each access's own order as the layout, cost with each op's legal instructions
    (counted here independently)."""
    from bankproof.verifier.engine.costs import best_cost
    from bankproof.verifier.triton.accesses import buffer_accesses, layouts_of, resolved, sm_of
    from bankproof.verifier.triton.plans import (
        legal_instructions,
        preferred_layout,
        trivial_layouts,
        whole_buffer,
    )
    from bankproof.verifier.triton.ttgir import read_ttgir

    checked = 0
    for e in entries:
        if "report" not in e:
            continue
        mod = read_ttgir(e["ttgir"])
        for b in e["report"]["buffers"]:
            if b["optimal_wavefronts"] is None or any("error" in a for a in b["accesses"]):
                continue
            if "nvmma" in resolved(mod, b["shared"]):  # read by wgmma/tcgen05: only nvmma layouts allowed
                continue
            accs = [a for a in buffer_accesses(mod) if a.buffer == b["buffer"]]
            dists = [(a, layouts_of(mod, a)[0]) for a in accs]
            own = [preferred_layout(whole_buffer(d)) for _, d in dists]
            for memory in trivial_layouts(whole_buffer(dists[0][1]).out_dims) + own:
                costs = [best_cost(d, a.kind, memory, a.memdesc.elem_bits,
                                   legal_instructions(a.op.name, a.kind, a.memdesc.elem_bits, sm_of(mod.target)))
                         for a, d in dists]  # fmt: skip
                if all(c is not None for c in costs):
                    assert b["optimal_wavefronts"] <= sum(c[0] for c in costs), (
                        e["config"],
                        e["arch"],
                        b["buffer"],
                    )
                    checked += 1
    assert checked > 100


def test_tf32_b_tile_scan_reports_an_equally_coalesced_writer_4x_cheaper(entries):
    """The tf32 wgmma B tile (sm90, 4-byte cp.async into a transposed nvmma buffer): Triton's
    writer costs 2048 per copy (16x ideal). The scan searches every writer copying the same four
    128-byte lines per warp instruction (lanes: any 5-dim subspace of the 7 N bits the warp holds,
    2480 of them per swizzle width) and reports the cheapest: 512 per copy on the buffer's own
    128-byte swizzle, the writer measured on the GPU (next test); none is cheaper in the family."""
    from bankproof.models.layout import LinearLayout
    from bankproof.verifier.engine.costs import best_cost
    from bankproof.verifier.triton.accesses import buffer_accesses, layouts_of
    from bankproof.verifier.triton.ttgir import read_ttgir

    (e,) = [e for e in entries if e["config"] == "matmul_fp32_128x128x32_w4_s3" and e["arch"] == "sm90"]
    (b,) = [b for b in e["report"]["buffers"] if b["buffer"] == "%b_23"]
    assert [a["wavefronts"] for a in b["accesses"]] == [2048] * 3
    w = b["better_writer"]
    assert (w["per_access"], w["wavefronts"], w["instr"], w["searched"]) == (512, 1536, "st32", 4 * 2480)
    assert "swizzlingByteWidth = 128" in w["shared"]
    mod = read_ttgir(e["ttgir"])
    dist, memory = layouts_of(mod, next(a for a in buffer_accesses(mod) if a.buffer == "%b_23"))
    assert dist.in_bases("lane") == ((0, 4), (0, 8), (0, 16), (0, 32), (0, 64))  # N bits 2-6: 4 lines
    assert best_cost(dist, "store", memory, 32, ["st64", "st128"]) is None  # K-major: no wider copy
    writer = LinearLayout.from_bases(w["layout"], dict(dist.out_dims))
    assert best_cost(writer, "store", memory, 32, ["st32"])[0] == 512  # recounted on Triton's own layout
    lanes = [x[1] for x in writer.in_bases("lane")]
    assert sorted(x >> 5 for x in lanes if x >> 5) == [1, 2]  # the same 4 lines


def test_tf32_writer_measured_on_the_gpu():
    """gpu_checks/results/h100-2026-11-23-tf32-writer.json: the tf32 B tile's nvmma layout stored
    (as 4-byte st.shared, the shared side of the cp.async) by Triton's writer and by the coalesced
    writer the search finds, on an H100: data right, 2048 and 512 store wavefronts, as predicted."""
    from bankproof.gpu_checks.results import RESULTS

    runs = {
        r["id"]: r for r in json.loads((RESULTS / "h100-2026-11-23-tf32-writer.json").read_text())["runs"]
    }
    assert {k: r["measured"]["store"] for k, r in runs.items()} == {
        "tf32 B tile: triton writer st32": 2048,
        "tf32 B tile: coalesced writer st32": 512,
    }
    assert all(r["measured"] == r["predicted"] and r["data_mismatches"] == 0 for r in runs.values())


def test_conversion_plans_never_above_tritons(entries, capsys):
    """Every ``convert_layout`` Triton lowers through shared memory (its PTX's store and load at the
    op's source location, counted from the PTX's own addresses by the ledger): the scan's searched
    plan (layout and instructions) costs no more. Left out, and counted: conversions whose PTX
    load runs in fewer threads than its layout holds (ptxas exits the threads whose store was
    off: outside the layout model, which counts every warp) and kernels whose PTX puts a conversion's instructions at a location no conversion has."""
    compared = same = better = skipped = 0
    for e in entries:
        led = [x for x in e.get("ledger", {}).get("entries", []) if x.get("op") == "ttg.convert_layout"]
        if not led:
            continue
        ours: dict[str, list] = {}
        for c in e["report"]["conversions"]:
            loc = c["location"]
            ours.setdefault(f"{Path(loc['source']).name}:{loc['line']}:{loc['column']}", []).append(c)
        theirs: dict[str, list] = {}
        for x in led:
            theirs.setdefault(x["location"], []).append(x)
        if not set(theirs) <= set(ours):
            skipped += len(theirs)
            continue
        for loc, xs in theirs.items():
            if any("exits the threads" in x.get("note", "") for x in xs):
                skipped += 1
                continue
            plans = [c["shared_plan"]["wavefronts"] for c in ours[loc]]
            triton = sum(x["wavefronts"] for x in xs)
            assert sum(plans) <= triton, (e["config"], e["arch"], loc, plans, triton)
            compared += 1
            same += sum(plans) == triton
            better += sum(plans) < triton
    assert compared >= 140
    with capsys.disabled():
        print(
            f"\nconvert_layout plans: {compared} compared with Triton's PTX, {same} equal, {better} cheaper, "
            f"0 above; {skipped} left out (threads exited or unattributed)"
        )


def test_the_gate_fails_on_what_a_layout_alone_closes(records):
    """The built-in corpus has buffers above the optimum over layouts and instructions (narrow fp8
    reads, ...) but none that another shared layout alone would make cheaper: the gate's default
    rule (what Triton's layout choice controls) passes it; --require-optimal would not."""
    buffers = [b for e in records if e.report for b in e.report.buffers]
    assert not any(b.layout_gap for b in buffers)
    assert sum(1 for b in buffers if b.gap and b.layout_gap == 0) >= 5
