"""Every recorded GPU measurement replayed against the model: exact equality, or CI fails."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from bankproof.gpu_checks.results import metric_for, single_instruction_runs
from bankproof.models.hardware import LANES, instruction, wavefront_counts


def test_model_equals_every_recorded_measurement(capsys):
    total = 0
    per_kind: Counter = Counter()
    mismatches = []
    for run in single_instruction_runs():
        assert run["gpu"] and run["driver"] and run["ncu"]
        groups: dict[str, list[dict]] = defaultdict(list)
        for m in run["measurements"]:
            groups[m["instr"]].append(m)
        for name, ms in groups.items():
            ins = instruction(name)
            offs = np.array([m["byte_offsets"] for m in ms])
            active = np.array([[(m["mask"] >> lane) & 1 for lane in range(LANES)] for m in ms], dtype=bool)
            got = wavefront_counts(ins, offs, active)
            for m, g in zip(ms, got):
                want = m["metrics"][metric_for(ins)]
                total += 1
                per_kind[name] += 1
                if g != want:
                    mismatches.append((run["file"], m["id"], name, m["family"], int(g), want))
    with capsys.disabled():
        print(
            f"\nreplayed {total} recorded GPU measurements ({len(per_kind)} instruction kinds): "
            f"{len(mismatches)} mismatches"
        )
    assert total >= 1500
    assert not mismatches, mismatches[:5]


def test_each_probe_executed_one_instruction():
    for run in single_instruction_runs():
        for m in run["measurements"]:
            ins = instruction(m["instr"])
            metric = {
                "ld": "smsp__sass_inst_executed_op_shared_ld.sum",
                "st": "smsp__sass_inst_executed_op_shared_st.sum",
                "ldsm": "sm__sass_inst_executed_op_ldsm.sum",
            }.get(ins.op)
            if metric:
                assert m["metrics"][metric] == 1, (run["file"], m["id"])
