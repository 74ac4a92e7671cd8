"""Whole Triton kernels on the GPU: compile here (Triton 3.9.0, CPU), launch there (CuPy, no
Triton), count with Nsight Compute, and compare with the ledger.

- ``python -m bankproof.verifier.triton.gpu_plan DIR`` (here, with the ``triton`` extra) writes
  each kernel's cubin and ``plan.json``.
- ``run plan.json`` (device): launches each kernel once, one CTA, in plan order.
- ``collect plan.json ncu.csv out.json``: the measured counters per kernel, next to the ledger.

>>> METRICS[0]
'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from bankproof.gpu_checks import metrics

METRICS = [
    *metrics.WAVEFRONTS.values(),
    *metrics.INSTRUCTIONS.values(),
    *(f"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts{m}.sum" for m in ("", "_cache_access", "_cache_bypass")),
    "sm__sass_inst_executed_op_ldgsts.sum",
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("gmma", "misc", "atom")),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
]  # fmt: skip


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    plan = json.loads(Path(plan_path).read_text())
    base = Path(plan_path).parent
    for kp in plan["kernels"]:
        mod = cp.RawModule(path=str(base / kp["cubin"]))
        fn = mod.get_function(kp["kernel"])
        if kp["shared"] > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = kp["shared"]
        args = []
        for p in kp["params"]:
            if "buffer" in p:
                args.append(
                    cp.zeros(max(p["buffer"], 256) // 4, dtype=cp.int32) if p["buffer"] else np.uint64(0)
                )
            else:
                args.append(
                    {"u32": np.int32, "s32": np.int32, "u64": np.int64, "s64": np.int64}.get(
                        p["type"], np.int32
                    )(p["value"])
                )
        fn((1, 1, 1), (kp["threads"], 1, 1), tuple(args), shared_mem=kp["shared"])
        cp.cuda.Device().synchronize()
        print(f"ran {kp['name']}", flush=True)


def collect(plan_path: str, csv_path: str, out_path: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    rows = list(
        csv.DictReader(line for line in Path(csv_path).read_text().splitlines() if line.startswith('"'))
    )
    rows = [r for r in rows if r.get("ID", "").isdigit()]
    if len(rows) != len(plan["kernels"]):
        print(f"warning: {len(rows)} profiled launches for {len(plan['kernels'])} kernels", file=sys.stderr)
    runs = []
    for kp, row in zip(plan["kernels"], rows, strict=False):
        measured = {}
        for m in METRICS:
            v = row.get(m, "").replace(",", "")
            measured[m] = int(float(v)) if v not in ("", "n/a") else None
        runs.append({"name": kp["name"], "kernel": kp["kernel"], "args": kp["args"], "threads": kp["threads"],
                     "shared": kp["shared"], "measured": measured, "ledger_totals": kp["ledger_totals"]})  # fmt: skip
    Path(out_path).write_text(
        json.dumps({"arch": plan["arch"], "triton": plan["triton"], "runs": runs}, indent=1)
    )
    print(f"{len(runs)} runs -> {out_path}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "run":
        run(sys.argv[2])
    elif cmd == "collect":
        collect(*sys.argv[2:5])
    elif cmd == "metrics":
        print(",".join(METRICS))
    else:
        sys.exit(
            "usage: python -m bankproof.gpu_checks.triton_kernels run PLAN | collect PLAN CSV OUT | metrics"
        )
