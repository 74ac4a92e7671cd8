"""Whole Triton kernels on the GPU: compile here (Triton 3.9.0, CPU), launch there (CuPy, no
Triton), count with Nsight Compute, and compare with the ledger.

- ``python -m lab.gpu.gpu_plan DIR`` (here, with the ``triton`` extra) writes
  each kernel's cubin and ``plan.json``.
- ``run plan.json`` (device): launches each kernel once, one CTA, in plan order.
- ``collect plan.json ncu.csv out.json``: the measured counters per kernel, next to the ledger.

>>> METRICS[0]
'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks import metrics
from bankproof.gpu_checks.measure import counters, parse_ncu_csv
from bankproof.verifier.triton.measured_rules import st_agrees

METRICS = [
    *metrics.WAVEFRONTS.values(),
    *metrics.INSTRUCTIONS.values(),
    *(f"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts{m}.sum" for m in ("", "_cache_access", "_cache_bypass")),
    "sm__sass_inst_executed_op_ldgsts.sum",
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("gmma", "misc", "atom")),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
]  # fmt: skip


def _w(op: str) -> str:
    return f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"


def _g(suffix: str) -> str:
    return f"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts{suffix}.sum"


def compare(
    measured: dict[str, int | None], totals: dict[str, dict], async_copies: bool = False
) -> dict[str, tuple]:
    """Ledger totals (per op class, one CTA) against Nsight Compute's counters, as
    ``{quantity: (ledger, measured)}`` for every quantity that differs. LDSM/STSM wavefronts count
    under the l1tex ``op_ld``/``op_st`` metrics with the plain loads and stores; cp.async under
    ``ldgsts`` (``cache_access`` for ``.ca``, ``cache_bypass`` for ``.cg``). With ``async_copies``
    (the kernel copies into shared memory asynchronously), st wavefronts agree under the measured
    contention rule (:func:`bankproof.verifier.triton.measured_rules.st_agrees`).

    >>> compare({_w("ld"): 12, METRICS[4]: 3}, {"ld": {"wavefronts": 4, "instructions": 3},
    ...                                        "ldsm": {"wavefronts": 8, "instructions": 2}})["ldsm_instructions"]
    (2, None)
    """

    def led(cls: str, key: str) -> int | None:
        v = totals.get(cls, {}).get(key, 0)
        return v

    def add(*vals):
        return None if any(v is None for v in vals) else sum(vals)

    pairs = {
        "ld_wavefronts": (add(led("ld", "wavefronts"), led("ldsm", "wavefronts")), measured.get(_w("ld"))),
        "st_wavefronts": (add(led("st", "wavefronts"), led("stsm", "wavefronts")), measured.get(_w("st"))),
        "ldgsts_instructions": (
            add(led("ldgsts", "instructions"), led("ldgsts_bypass", "instructions")),
            measured.get("sm__sass_inst_executed_op_ldgsts.sum"),
        ),
        "gmma_wavefronts": (led("gmma", "wavefronts"), measured.get(_w("gmma"))),
        "ldgsts_ca_wavefronts": (led("ldgsts", "wavefronts"), measured.get(_g("_cache_access"))),
        "ldgsts_cg_wavefronts": (led("ldgsts_bypass", "wavefronts"), measured.get(_g("_cache_bypass"))),
    }
    for cls in ("ld", "st", "ldsm", "stsm"):
        pairs[f"{cls}_instructions"] = (led(cls, "instructions"), measured.get(metrics.INSTRUCTIONS[cls]))
    cg_range = totals.get("ldgsts_bypass", {}).get("ncu_range")  # measured_rules.GUARDED_CG_NOTE
    cg_meas = pairs["ldgsts_cg_wavefronts"][1]
    if cg_range and cg_meas is not None and cg_range[0] <= cg_meas <= cg_range[1]:
        del pairs["ldgsts_cg_wavefronts"]
    st_pred, st_meas = pairs["st_wavefronts"]
    if st_pred is not None and st_meas is not None and st_pred != st_meas:
        ideal = add(totals.get("st", {}).get("ideal", 0), totals.get("stsm", {}).get("ideal", 0))
        conflicts = measured.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
        if ideal is not None and st_agrees(st_meas, conflicts, st_pred, ideal, async_copies):
            del pairs["st_wavefronts"]  # the measured contention rule (measured_rules.ASYNC_ST_NOTE)
    return {k: v for k, v in pairs.items() if v[0] != v[1]}


def run(plan_path: str, launched_path: str | None = None) -> None:
    """Launch every kernel of the plan once (one CTA, or its ``grid``), skipping those that ask for more shared
    memory than the device allows a block; ``launched_path`` lists the names launched, in order."""
    import cupy as cp
    import numpy as np

    plan = json.loads(Path(plan_path).read_text())
    base = Path(plan_path).parent
    limit = cp.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]
    launched = []
    for kp in plan["kernels"]:
        if kp["shared"] > limit:
            print(
                f"skip {kp['name']}: needs {kp['shared']} bytes of shared memory, the device allows {limit}"
            )
            continue
        mod = cp.RawModule(path=str(base / kp["cubin"]))
        fn = mod.get_function(kp["kernel"])
        if kp["shared"] > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = kp["shared"]
        args = []
        for p in kp["params"]:
            if "buffer" in p:  # zeroed, or filled with one int32 value ("fill")
                buf = (
                    cp.full(max(p["buffer"], 256) // 4, p.get("fill", 0), dtype=cp.int32)
                    if p["buffer"]
                    else None
                )
                args.append(buf if buf is not None else np.uint64(0))
            else:
                width = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64}
                bits = 64 if p["type"].endswith("64") else 32
                value = p["value"] & ((1 << bits) - 1) if p["type"].startswith("u") else p["value"]
                args.append(width.get(p["type"], np.int32)(value))  # a negative i32 as its u32 bits
        fn(tuple(kp.get("grid", (1, 1, 1))), (kp["threads"], 1, 1), tuple(args), shared_mem=kp["shared"])
        cp.cuda.Device().synchronize()
        launched.append(kp["name"])
        print(f"ran {kp['name']}", flush=True)
    if launched_path:
        Path(launched_path).write_text(json.dumps(launched))


def collect(plan_path: str, csv_path: str, out_path: str, launched_path: str | None = None) -> None:
    """Pair the profiled launches (in order) with the kernels launched, and write the record."""
    plan = json.loads(Path(plan_path).read_text())
    if launched_path:
        names = set(json.loads(Path(launched_path).read_text()))
        plan["kernels"] = [k for k in plan["kernels"] if k["name"] in names]
    rows = parse_ncu_csv(Path(csv_path).read_text())
    kernels = {k["kernel"] for k in plan["kernels"]}
    rows = [r for r in rows if r.get("Kernel Name", next(iter(kernels), "")) in kernels]  # not CuPy's fills
    if len(rows) != len(plan["kernels"]):
        print(f"warning: {len(rows)} profiled launches for {len(plan['kernels'])} kernels", file=sys.stderr)
    runs = []
    for kp, row in zip(plan["kernels"], rows, strict=False):
        runs.append({"name": kp["name"], "kernel": kp["kernel"], "args": kp["args"], "threads": kp["threads"],
                     "shared": kp["shared"], "measured": counters(row, METRICS), "ledger_totals": kp["ledger_totals"]})  # fmt: skip
    Path(out_path).write_text(
        json.dumps({"arch": plan["arch"], "triton": plan["triton"], "runs": runs}, indent=1)
    )
    print(f"{len(runs)} runs -> {out_path}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "run":
        run(*sys.argv[2:4])
    elif cmd == "collect":
        collect(*sys.argv[2:6])
    elif cmd == "metrics":
        print(",".join(METRICS))
    else:
        sys.exit("usage: python -m lab.gpu.triton_kernels run PLAN | collect PLAN CSV OUT | metrics")
