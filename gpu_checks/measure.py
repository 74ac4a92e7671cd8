"""Measure single shared-memory instructions on the GPU with Nsight Compute.

    python -m bankproof.gpu_checks.measure plan PLAN.json [--per-kind N] [--seed S]
    ncu --csv --page raw --metrics $(python -m bankproof.gpu_checks.measure metrics) \\
        python -m bankproof.gpu_checks.measure run PLAN.json > NCU.csv
    python -m bankproof.gpu_checks.measure collect PLAN.json NCU.csv RESULTS.json

``run`` launches one warp per pattern, one instruction per launch, in plan order; ``collect``
matches ncu's rows to patterns by launch order (checking kernel names) and records the GPU,
driver and ncu version with every metric value. Needs cupy and a GPU for ``run`` only.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import subprocess
import sys

from bankproof.gpu_checks.kernels import kernel_name, kernel_source
from bankproof.gpu_checks.metrics import SINGLE_INSTRUCTION
from bankproof.gpu_checks.patterns import plan
from bankproof.models.hardware import instruction

METRICS = SINGLE_INSTRUCTION


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    with open(plan_path) as fh:
        patterns = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    mod = cp.RawModule(code=kernel_source(arch), options=(f"-arch=sm_{arch}",))
    kernels = {}
    out = cp.empty(32, dtype=cp.uint32)
    for p in patterns:
        ins = instruction(p["instr"])
        if ins.short not in kernels:
            kernels[ins.short] = mod.get_function(kernel_name(ins))
        offs = cp.asarray(np.asarray(p["byte_offsets"], dtype=np.int32))
        kernels[ins.short]((1,), (32,), (offs, np.uint32(p["mask"]), out))
    cp.cuda.Device().synchronize()


def parse_ncu_csv(text: str) -> list[dict]:
    """Rows of ``ncu --csv --page raw`` (after the units row), in launch order."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    out = []
    for r in rows:
        if not r.get("ID", "").isdigit():
            continue  # the units row
        out.append(r)
    out.sort(key=lambda r: int(r["ID"]))
    return out


def counters(row: dict, metrics: list[str]) -> dict[str, float | int | None]:
    """One ncu row's values of ``metrics`` (``None`` where ncu gave none).

    >>> counters({"a": "1,024", "b": "n/a"}, ["a", "b", "c"])
    {'a': 1024, 'b': None, 'c': None}
    """
    return {m: number_value(row.get(m, "")) for m in metrics}


def number_value(v: str) -> float | int | None:
    v = v.replace(",", "").strip()
    if v in ("", "n/a", "nan"):
        return None
    f = float(v)
    return int(f) if f.is_integer() else f


def environment() -> dict:
    def q(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    gpu = q(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"])
    name, driver, cc = ([x.strip() for x in gpu.split(",")] + ["", "", ""])[:3]
    ncu = q(["ncu", "--version"]).splitlines()
    return {"gpu": name, "driver": driver, "compute_capability": cc, "ncu": ncu[-1] if ncu else ""}


def match_launches(plan_path: str, ncu_path: str, kernel_of, metrics: list[str]) -> list[dict]:
    """The plan's patterns, each with its launch's metric values: ncu's probe rows (kernels named
    ``k_...``) in launch order, checked one by one against ``kernel_of(pattern)``."""
    with open(plan_path) as fh:
        patterns = json.load(fh)
    with open(ncu_path) as fh:
        rows = [r for r in parse_ncu_csv(fh.read()) if r.get("Kernel Name", "").startswith("k_")]
    if len(rows) != len(patterns):
        raise SystemExit(f"ncu reported {len(rows)} probe launches for {len(patterns)} patterns")
    out = []
    for p, r in zip(patterns, rows):
        want = kernel_of(p)
        if not r["Kernel Name"].startswith(want):
            raise SystemExit(f"launch {p['id']}: ncu row is {r['Kernel Name']}, expected {want}")
        out.append({**p, "metrics": {m: number_value(r[m]) for m in metrics if m in r}})
    return out


def probe_cli(argv: list[str], plan, run, kernel_of, metrics: list[str]) -> None:
    """The command line of a lab probe module: ``plan OUT`` (its ``plan()`` as JSON), ``metrics``
    (for ncu's ``--metrics``), ``run PLAN`` (the launches) and ``collect PLAN NCU.csv OUT`` (each
    pattern with its launch's counters, :func:`match_launches` by ``kernel_of``)."""
    cmd = argv[0]
    if cmd == "plan":
        with open(argv[1], "w") as fh:
            json.dump(plan(), fh)
    elif cmd == "metrics":
        print(",".join(metrics))
    elif cmd == "run":
        run(argv[1])
    elif cmd == "collect":
        runs = match_launches(argv[1], argv[2], kernel_of, metrics)
        with open(argv[3], "w") as fh:
            json.dump({"schema": 1, **environment(), "metrics": metrics, "measurements": runs}, fh)
        print(f"{len(runs)} probes -> {argv[3]}")


def collect(plan_path: str, ncu_path: str, out_path: str) -> None:
    measurements = match_launches(
        plan_path, ncu_path, lambda p: kernel_name(instruction(p["instr"])), METRICS
    )
    env = environment()
    result = {
        "schema": 1,
        **env,
        "date": datetime.date.today().isoformat(),
        "metrics": METRICS,
        "measurements": measurements,
    }
    with open(out_path, "w") as fh:
        json.dump(result, fh, separators=(",", ":"))
    print(f"{len(measurements)} measurements on {env['gpu']} -> {out_path}")


def main(argv: list[str]) -> None:
    cmd = argv[0]
    if cmd == "plan":
        per_kind = int(argv[argv.index("--per-kind") + 1]) if "--per-kind" in argv else 70
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 2026
        limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else None
        ps = plan(seed=seed, per_kind=per_kind)
        if limit:
            ps = ps[:: max(1, len(ps) // limit)][:limit]
            for i, p in enumerate(ps):
                p["id"] = i
        with open(argv[1], "w") as fh:
            json.dump(ps, fh)
        print(f"{len(ps)} patterns -> {argv[1]}")
    elif cmd == "metrics":
        print(",".join(METRICS))
    elif cmd == "run":
        run(argv[1])
    elif cmd == "collect":
        collect(argv[1], argv[2], argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
