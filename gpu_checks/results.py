"""Recorded GPU measurements (``gpu_checks/results/*.json``): loading and the metric that
measures each instruction kind.

>>> metric_for(instruction("ldsm.x4"))
'sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum'
"""

from __future__ import annotations

import json
from pathlib import Path

from bankproof.gpu_checks.metrics import WAVEFRONTS as WAVEFRONT_METRIC
from bankproof.models.hardware import Instr, instruction

RESULTS = Path(__file__).with_name("results")


def metric_for(ins: Instr) -> str:
    return WAVEFRONT_METRIC[ins.op]


def single_instruction_runs() -> list[dict]:
    """Every recorded run file of single-instruction measurements (with its GPU info)."""
    runs = []
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        if "measurements" in data:
            data["file"] = path.name
            runs.append(data)
    return runs


__all__ = ["RESULTS", "WAVEFRONT_METRIC", "instruction", "metric_for", "single_instruction_runs"]
