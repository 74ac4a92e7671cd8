"""The ledger's control flow, one kernel per kind (``tests/data/control_flow``, compiled by Triton
3.9.0 for sm90 by ``lab/control_flow.py``): branch arms and early returns decided from the
arguments and program ids given, or named with the total a range; a flattened persistent loop's
epilogue once per tile; ``min``-bounded and loaded loop bounds. The kernels ran on an H200 with
grids and arguments that take each way (``gpu_checks/results/h200-2026-11-26-control-flow.json``):
the sum of the per-CTA ledgers equals Nsight Compute wherever the ledger calls itself complete."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bankproof.gpu_checks.results import RESULTS
from bankproof.verifier.triton import ledger, ledger_records, ledger_totals
from bankproof.verifier.triton.ledger_records import Span
from bankproof.verifier.triton.scan import scan_text
from bankproof.verifier.triton.sites import read_sites

from lab.gpu.control_flow_plan import RUNS, ctas
from lab.gpu.triton_kernels import compare

DATA = Path(__file__).resolve().parent / "data" / "control_flow"


def led(kernel: str, args: dict[str, int]) -> dict:
    ttgir, ptx = ((DATA / f"{kernel}.{x}").read_text() for x in ("ttgir", "ptx"))
    return ledger.build(scan_text(ttgir), ttgir, ptx, args).to_dict()  # the JSON a user reads


def flat(totals: dict) -> dict[str, tuple]:
    return {cls: (t["wavefronts"], t["instructions"]) for cls, t in totals.items()}


def test_runtime_branch_with_both_arms_is_a_range_until_its_argument_is_given():
    """``if M % BM == 0`` picks one of two reductions: with M unknown each arm is counted once
    and named, the totals a range (never a number); M = 128 and M = 100 each run one arm."""
    r = led("both_arms", {})
    assert r["totals"]["st"]["wavefronts"] is None
    assert r["totals"]["st"]["range"] == {"wavefronts": [48, 48], "instructions": [12, 12]}
    assert r["totals"]["st"]["depends_on"] == ["(M % 64) == 0"]
    arms = sorted(e["condition"] for e in r["entries"] if e.get("condition"))
    assert arms == [["(M % 64) == 0"]] * 2 + [["not ((M % 64) == 0)"]] * 2
    for m, run, off in (
        (128, "kernels.py:14:13", "kernels.py:16:13"),
        (100, "kernels.py:16:13", "kernels.py:14:13"),
    ):
        got = led("both_arms", {"M": m})
        execs = {e["location"]: e["executions"] for e in got["entries"]}
        assert (execs[run], execs[off]) == (1, 0), m
        assert flat(got["totals"])["st"] == (48, 12)
        assert got["incomplete"] == ["1 instruction group(s) no TTGIR op owns"]  # LLVM's merged tail load


def test_decided_branch_on_program_ids():
    assert flat(led("decided_branch", {"program_id_x": 2, "program_id_y": 1})["totals"]) == {
        "ld": (32, 8), "ldsm": (4, 4), "st": (48, 12)}  # fmt: skip
    assert flat(led("decided_branch", {"program_id_x": 0, "program_id_y": 1})["totals"]) == {
        "ld": (0, 0), "ldsm": (0, 0), "st": (0, 0)}  # fmt: skip
    r = led("decided_branch", {})
    assert r["totals"]["ld"]["range"]["wavefronts"] == [0, 32]
    assert "program_id_x is not given (--arg program_id_x=N)" in r["incomplete"][0]


def test_early_return():
    """``if pid == 0: return``: program 0 moves nothing (it once counted the whole kernel)."""
    assert flat(led("early_return", {"program_id_x": 0})["totals"])["ld"] == (0, 0)
    assert flat(led("early_return", {"program_id_x": 3})["totals"])["ld"] == (32, 8)
    assert led("early_return", {})["totals"]["st"]["depends_on"] == ["program_id_x == 0"]


def test_flattened_persistent_epilogue_runs_once_per_tile():
    r = led("flat_persistent", {"k_tiles": 4, "n_tiles": 3})
    assert flat(r["totals"]) == {"ld": (156, 60), "st": (240, 96)} and r["incomplete"] == []
    assert {e["executions"] for e in r["entries"]} == {3}  # 12 iterations, 3 tiles
    assert all("on 3 of 12 iterations" in e["cycles"][0] for e in r["entries"])
    unknown = led("flat_persistent", {"k_tiles": 4})  # trips unknown: the total says so
    assert unknown["totals"]["st"]["wavefronts"] is None and unknown["incomplete"]


@pytest.mark.parametrize("k, iterations", [(100, 2), (1000, 4), (64, 1)])
def test_min_bounded_loop(k, iterations):
    """``range(0, min(K, 4 * BM), BM)``: cdiv(min(K, 256), 64) iterations."""
    r = led("min_loop", {"K": k})
    reduce_ld = next(e for e in r["entries"] if e["instr"] == "ld128")
    assert reduce_ld["executions"] == iterations and r["incomplete"] == []


def test_loop_bound_loaded_from_memory_says_so():
    r = led("loaded_loop", {})
    e = next(e for e in r["entries"] if e["instr"] == "ld128")
    assert e["executions"] is None
    assert e["executions_reason"] == ("per iteration: load(n_ptr) is loaded from memory at run time "
                                      "(--buffer n_ptr=FILE.npy with the launch's integer arguments, or --arg fill_n_ptr=N: "
                                          "what its buffer holds)")  # fmt: skip
    assert r["totals"]["ld"]["wavefronts"] is None


RECORD = json.loads((RESULTS / "h200-2026-11-26-control-flow.json").read_text())


def _summed(source: str, grid, args: dict[str, int]) -> dict:
    out: dict[str, dict] = {}
    for cta in ctas(tuple(grid)):
        for cls, t in led(source, {**args, **cta})["totals"].items():
            c = out.setdefault(cls, {"wavefronts": 0, "instructions": 0})
            for key in ("wavefronts", "instructions"):
                c[key] = None if c[key] is None or t[key] is None else c[key] + t[key]
    return out


@pytest.mark.parametrize("run", RECORD["runs"], ids=lambda r: r["name"])
def test_the_h200_record_equals_the_summed_per_cta_ledgers(run):
    name, source, grid, args, _ = next(r for r in RUNS if r[0] == run["name"])
    diffs = compare(run["measured"], _summed(source, grid, args))
    if source == "both_arms":  # the one load LLVM merged below both arms, unowned: the ledger says so
        assert diffs == {"ld_wavefronts": (20, 36), "ld_instructions": (4, 8)}
    elif source == "loaded_loop":  # n = 192 was in memory: 3 iterations of the per-iteration counts
        assert diffs == {"ld_wavefronts": (None, 100), "st_wavefronts": (None, 112),
                         "ld_instructions": (None, 24), "st_instructions": (None, 28)}  # fmt: skip
        es = led(source, {})["entries"]
        loop = {e["instr"]: e["wavefronts"] for e in es if e["executions"] is None}  # per iteration
        once = {e["instr"]: e["wavefronts"] for e in es if e["executions"] == 1}  # the convert after it
        assert 3 * loop["ld128"] + once["ldsm.x1"] == 100 and 3 * loop["st128"] + once["st128"] == 112
    else:
        assert diffs == {}, diffs


def test_a_ranged_copy_under_an_undecided_branch_tops_the_range_at_its_most():
    """A cp.async entry both under an undecided arm and with open global lines: the range's top is
    its most (lines), not its store count (once the arm's store count capped the top: 64)."""
    e = {"counted": True, "family": "ldgsts", "instr": "cp16", "cache": ["cg"], "total_wavefronts": 64,
         "total_instructions": 16, "total_wavefronts_max": 128, "condition_key": [["%c", True]],
         "condition": ["c"], "depends_on": ["c"]}  # fmt: skip
    t = ledger_totals.totals([e])["ldgsts_bypass"]
    assert t.range == Span(wavefronts=(0, 128), instructions=(0, 16)) and t.wavefronts is None


def test_the_text_report_of_a_ranged_total_names_its_condition(capsys):
    """The text output once raised KeyError 'instructions' on a ledger whose total is a range (issue 41):
    with M unknown it prints each arm's lines and the range with what it depends on."""
    from bankproof.verifier.cli.main import main

    code = main(["triton", "scan", str(DATA / "both_arms.ttgir"), "--ptx", str(DATA / "both_arms.ptx")])
    out = capsys.readouterr().out
    assert code == 4 and "Traceback" not in out  # 4: one ld128 no TTGIR op owns (named below)
    assert "st 48..48 wavefronts / 12..12 instructions (depends on (M % 64) == 0)" in out
    assert "tt.reduce (scratch) st128 x8 x1 if not ((M % 64) == 0): 32 wavefronts (ideal 32)" in out
    assert "unattributed kernels.py:0:0: 1 ld128 with no TTGIR op to own it" in out


def test_a_loop_bound_loaded_from_memory_gives_totals_as_formulas():
    """``for i in range(0, tl.load(n_ptr), 64)``: the totals are exact expressions in the loop's
    trip count (named ``trips_L<TTGIR line>``, with its bounds and why it is open), not unknown."""
    r = ledger.build(*_inputs("loaded_loop"), {})
    forms = {cls: (t.formula.wavefronts, t.formula.instructions) for cls, t in r.totals.items() if t.formula}
    assert forms == {"ld": ("32*trips_L25", "8*trips_L25"), "st": ("16 + 32*trips_L25", "4 + 8*trips_L25")}
    assert r.totals["ldsm"].wavefronts == 4 and r.totals["ld"].wavefronts is None
    (u,) = r.unknowns
    assert (u.name, u.ttgir_line) == ("trips_L25", 25)
    assert (
        u.why == "load(n_ptr) is loaded from memory at run time (--buffer n_ptr=FILE.npy with the launch's "
        "integer arguments, or --arg fill_n_ptr=N: what its buffer holds)"
    )
    assert ledger_records.read_ledger(r.to_dict()) == r  # the JSON reads back, formulas included


def test_the_formula_at_the_measured_trip_count_is_the_h200_measurement():
    """n = 192 was in memory on the H200 (3 trips of 64): the formula at 3, and the ledger given
    ``trips_L25=3``, both equal every recorded counter (the l1tex ld class includes ldmatrix)."""
    run = next(r for r in RECORD["runs"] if r["name"] == "loaded_loop_192")
    name, source, grid, args, _ = next(r for r in RUNS if r[0] == run["name"])
    assert compare(run["measured"], _summed(source, grid, {**args, "trips_L25": 3})) == {}
    r = ledger.build(*_inputs("loaded_loop"), {})
    at = {cls: t.formula.at({"trips_L25": 3}) for cls, t in r.totals.items() if t.formula}
    given = ledger.build(*_inputs("loaded_loop"), {"trips_L25": 3}).totals
    assert (
        at
        == {cls: (given[cls].wavefronts, given[cls].instructions) for cls in at}
        == {"ld": (96, 24), "st": (112, 28)}
    )


@pytest.mark.parametrize("value, why", [({"trips_L99": 3}, "trips_L99 names no scf.for of the kernel (loops: trips_L25)"),
                                        ({"trips_L25": -1}, "must be a trip count from 0 to"),
                                        ({"trips_L26": 2}, "names no scf.for")])  # fmt: skip
def test_a_trip_count_for_no_open_loop_is_refused(value, why):
    from bankproof.models.errors import InputError

    with pytest.raises(InputError, match=re.escape(why)):
        ledger.build(*_inputs("loaded_loop"), value)


def test_a_trip_count_the_arguments_already_decide_is_refused():
    from bankproof.models.errors import InputError

    loops = {lp.unknown for s in read_sites((DATA / "min_loop.ttgir").read_text())[0] for lp in s.loops}
    (name,) = loops
    with pytest.raises(InputError, match="the arguments already give its trip count"):
        ledger.build(*_inputs("min_loop"), {"K": 256, name: 1})


def _inputs(kernel: str) -> tuple:
    ttgir, ptx = ((DATA / f"{kernel}.{x}").read_text() for x in ("ttgir", "ptx"))
    return scan_text(ttgir), ttgir, ptx


def test_what_a_buffer_holds_decides_a_loaded_loop_bound():
    """``--arg fill_n_ptr=192``: every scalar the kernel loads through ``n_ptr`` is 192 (as the H200
    run filled it), so the loop's 3 trips are computed and the ledger is complete and equal to the
    record; a fill for no argument of the kernel is refused."""
    from bankproof.models.errors import InputError

    run = next(r for r in RECORD["runs"] if r["name"] == "loaded_loop_192")
    name, source, grid, args, _ = next(r for r in RUNS if r[0] == run["name"])
    assert compare(run["measured"], _summed(source, grid, {**args, "fill_n_ptr": 192})) == {}
    assert ledger.build(*_inputs("loaded_loop"), {"fill_n_ptr": 192}).incomplete == ()
    with pytest.raises(InputError, match="fill_m_ptr names no argument of the kernel"):
        ledger.build(*_inputs("loaded_loop"), {"fill_m_ptr": 1})


WHILE = """module {
  tt.func public @k(%n: i32 loc("n"(#loc))) {
    %c0 = arith.constant 0 : i32 loc(#loc1)
    %t = scf.while (%i = %c0) : (i32) -> i32 {
      %c = arith.cmpi slt, %i, %n : i32 loc(#loc1)
      %x = ttg.local_load %buf : !ttg.memdesc<32xf32, #shared, #smem> -> tensor<32xf32, #b> loc(#loc1)
      scf.condition(%c) %i : i32 loc(#loc1)
    } do {
    ^bb0(%j: i32 loc(#loc1)):
      %y = ttg.local_load %buf : !ttg.memdesc<32xf32, #shared, #smem> -> tensor<32xf32, #b> loc(#loc2)
      %k = arith.addi %j, %c0 : i32 loc(#loc1)
      scf.yield %k : i32 loc(#loc1)
    } loc(#loc1)
    %z = ttg.local_load %buf : !ttg.memdesc<32xf32, #shared, #smem> -> tensor<32xf32, #b> loc(#loc1)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
"""


def test_an_scf_while_is_a_loop_of_open_trips_and_its_condition_region_is_told_apart():
    """An ``scf.while``'s body runs ``trips_L<line>`` times (a run-time count, left open in the
    totals' formulas); its condition region runs once more, so what it holds is not counted by
    that trip count."""
    from bankproof.verifier.triton.sites import read_sites

    sites, _, _ = read_sites(WHILE)
    by_name = {s.text.split("=")[0].strip(): s for s in sites}
    cond, body, after = by_name["%x"], by_name["%y"], by_name["%z"]
    (loop,) = body.loops
    assert cond.loops == (loop,) and after.loops == ()
    assert (cond.in_while_cond, body.in_while_cond, after.in_while_cond) == (True, False, False)
    assert (loop.kind, loop.line, loop.unknown, loop.text()) == (
        "while",
        4,
        "trips_L4",
        "while (TTGIR line 4)",
    )
    assert loop.trips() is None and loop.trips({"trips_L4": 3}) == 3
    assert "scf.while" in loop.why()


def test_a_guard_on_run_time_values_makes_the_count_a_range():
    """A shared load under a guard predicate the PTX computes from run-time values (ptxas may turn
    whole warps off) is counted like an undecided branch arm: from none of its warps to all."""
    from types import SimpleNamespace

    from bankproof.verifier.triton.ledger_branches import guard

    ins = SimpleNamespace(guard=(True, "%p7"), line=120)
    op = SimpleNamespace(unknown="the predicate %p7 depends on run-time values", ins=ins)
    entry = {"location": "k.py:9:5", "family": "lsu", "instr": "ld32", "counted": True, "kind": "buffer",
             "instructions": 8, "executions": 2, "wavefronts": 8, "ideal": 8,
             "total_wavefronts": 16, "total_instructions": 16}  # fmt: skip
    guard(entry, [op])
    assert entry["condition"] == ["the guard @!%p7 (PTX line 120) holds in the warp"]
    assert entry["condition_key"] == [["guard@PTX120", True]]
    sure = {**entry, "instr": "ld64", "condition": None, "condition_key": None, "depends_on": None}
    sure = {k: v for k, v in sure.items() if v is not None}
    t = ledger_totals.totals([entry, sure])["ld"]
    assert t.wavefronts is None and t.range.wavefronts == (16, 32) and t.range.instructions == (16, 32)
    assert t.depends_on == ("the guard @!%p7 (PTX line 120)",)
    unguarded = {"unknown": "", "ins": ins}
    before = dict(sure)
    guard(sure, [SimpleNamespace(**unguarded)])
    assert sure == before
