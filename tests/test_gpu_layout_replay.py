"""Recorded GPU layout runs replayed: every run moved the right data, and the model's predicted
wavefronts, recomputed now from the recorded layouts, equal what Nsight Compute measured."""

from __future__ import annotations

import json

import pytest
from bankproof.gpu_checks.results import RESULTS
from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout


def layouts(run: dict):
    dims = {f"dim{i}": s for i, s in enumerate(run["shape"])}
    store = LinearLayout.from_bases(run["store_layout"], dims)
    load = LinearLayout.from_bases(run["load_layout"], dims)
    linear = LinearLayout.from_bases({"offset": run["memory"]["offset"]}, dims)
    memory = (
        PaddedLayout(linear, tuple(map(tuple, run["memory"]["padded"])))
        if "padded" in run["memory"]
        else linear
    )
    return store, load, memory


def test_layout_runs_replay(capsys):
    runs = []
    for path in sorted(RESULTS.glob("*-layouts.json")):
        data = json.loads(path.read_text())
        assert data["kind"] == "layout_runs" and data["gpu"] and data["ncu"]
        runs += data["runs"]
    for run in runs:
        store, load, memory = layouts(run)
        st = build_access(store, memory, run["elem_bits"], "store", run["store_instr"])
        ld = build_access(load, memory, run["elem_bits"], "load", run["load_instr"])
        predicted = {
            "store": int(evaluate(st.instr, st.addresses)[0].sum()),
            "load": int(evaluate(ld.instr, ld.addresses)[0].sum()),
            "store_instructions": len(st.addresses),
            "load_instructions": len(ld.addresses),
        }
        assert run["data_mismatches"] == 0, run["id"]
        assert predicted == run["measured"], (run["id"], predicted, run["measured"])
    with capsys.disabled():
        print(f"\nreplayed {len(runs)} GPU layout runs: data correct, measured = predicted")
    assert len(runs) >= 100
    kinds = {r["load_instr"] for r in runs} | {r["store_instr"] for r in runs}
    assert kinds >= {"ldsm.x1", "ldsm.x2", "ldsm.x4", "ldsm.x2.trans", "ldsm.x4.trans", "stsm.x1", "stsm.x4"}
    # ldmatrix of 8- and 32-bit operands (each lane takes 4 bytes of a row per matrix), as Triton
    # loads tf32 and 8-bit dot operands: measured on the GPU too
    wide = {(r["elem_bits"], r["load_instr"]) for r in runs if r["load_instr"].startswith("ldsm")}
    assert {(b, f"ldsm.x{m}") for b in (8, 32) for m in (1, 2, 4)} <= wide
    assert {f"stsm.x{m}.trans" for m in (1, 2, 4)} <= kinds  # transposed stores, whole layouts


def test_emulation_matches_the_recorded_plan_semantics():
    """The CPU emulation of the layout kernel delivers what the load layout names."""
    from bankproof.gpu_checks.layout_cases import case_from_layouts, random_cases
    from bankproof.gpu_checks.layout_runs import check_data, emulate
    from bankproof.models.notation import parse_layout

    cases = random_cases(20, seed=3)
    a = parse_layout(
        '{"register": [[1,0],[2,0],[4,0],[8,0]], "lane": [[0,1],[0,2],[0,4],[0,8],[0,16]]}', [16, 32]
    )
    b = parse_layout(
        '{"register": [[0,2],[0,4],[0,8],[0,16]], "lane": [[1,0],[2,0],[4,0],[8,0],[0,1]]}', [16, 32]
    )
    m = parse_layout("32*m + (n ^ (2*m))", [16, 32])
    cases.append(case_from_layouts("seed", a.layout, b.layout, m.layout, 32))
    for c in cases:
        assert check_data(c, emulate(c)) == 0, c["id"]
    wrong = dict(cases[-1])
    wrong["load"] = dict(
        wrong["load"], addresses=[[x ^ 4 for x in row] for row in wrong["load"]["addresses"]]
    )
    assert check_data(wrong, emulate(wrong)) > 0


@pytest.mark.gpu_replay
def test_every_planned_case_has_a_kernel_moving_the_right_words():
    """Each case of a plan (matrix instructions included) names a kernel whose per-lane load width
    is what the CPU emulation produces, and whose PTX uses the planned instructions."""
    from bankproof.gpu_checks.layout_cases import matrix_cases
    from bankproof.gpu_checks.layout_kernels import case_kernel
    from bankproof.gpu_checks.layout_runs import emulate

    cases = matrix_cases()
    assert {c["load"]["instr"] for c in cases} >= {"ldsm.x4", "ldsm.x4.trans"}
    assert {c["store"]["instr"] for c in cases} >= {"stsm.x4"}
    for c in cases:
        name, source, words = case_kernel(c)
        assert name in source and emulate(c).shape[-1] == words
        if c["load"]["instr"].startswith("ldsm"):
            assert "ldmatrix.sync.aligned.m8n8" in source
        if c["store"]["instr"].startswith("stsm"):
            assert "stmatrix.sync.aligned.m8n8" in source


def test_matrix_instructions_are_counted_from_their_own_metric():
    from bankproof.gpu_checks.layout_runs import _instructions

    row = {
        "smsp__sass_inst_executed_op_shared_ld.sum": "0",
        "sm__sass_inst_executed_op_ldsm.sum": "4",
        "sm__sass_inst_executed_op_shared_stsm.sum": "3",
        "smsp__sass_inst_executed_op_shared_st.sum": "2",
    }
    assert _instructions(row, "ld") == 4 and _instructions(row, "st") == 5
