"""Nsight Compute metric names, each defined once (``ncu --query-metrics`` on an H200 and an H100,
ncu 2025.3.1).

LDSM/STSM wavefronts count under the ``sm__sass_l1tex`` shared ld/st metrics, but their
instruction counts only under ``sm__sass_inst_executed_op_ldsm`` / ``..._op_shared_stsm`` (not
``..._op_shared_ld/st``), as measured in ``results/h200-2026-11-22-layouts.json``.

>>> WAVEFRONTS["ld"]
'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'
>>> len(SINGLE_INSTRUCTION), LAYOUT_RUNS[-1]
(7, 'sm__sass_inst_executed_op_ldgsts.sum')
"""

from __future__ import annotations

WAVEFRONTS = {  # shared-memory wavefronts, by instruction op
    "ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "ldsm": "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "stsm": "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
}
INSTRUCTIONS = {  # warp instructions executed, by instruction op
    "ld": "smsp__sass_inst_executed_op_shared_ld.sum",
    "st": "smsp__sass_inst_executed_op_shared_st.sum",
    "ldsm": "sm__sass_inst_executed_op_ldsm.sum",
    "stsm": "sm__sass_inst_executed_op_shared_stsm.sum",
}
# What the single-instruction probes collect, and what whole-layout runs collect.
SINGLE_INSTRUCTION = [*WAVEFRONTS.values(), INSTRUCTIONS["ld"], INSTRUCTIONS["st"], INSTRUCTIONS["ldsm"]]
LDGSTS = [  # cp.async (LDGSTS) probes
    f"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts{mode}.sum"
    for mode in ("", "_cache_access", "_cache_bypass")
] + [
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
    "sm__sass_data_bytes_mem_shared_op_ldgsts.sum",
    "sm__sass_inst_executed_op_ldgsts.sum",
    "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "sm__sass_l1tex_t_output_wavefronts_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
    WAVEFRONTS["st"],
    INSTRUCTIONS["st"],
]
COPY_WAVEFRONTS = {"ca": LDGSTS[1], "cg": LDGSTS[2]}  # a cp.async's shared side, by cache mode
COPY_INSTRUCTIONS = LDGSTS[5]
LAYOUT_RUNS = [*SINGLE_INSTRUCTION, INSTRUCTIONS["stsm"], *COPY_WAVEFRONTS.values(), COPY_INSTRUCTIONS]
