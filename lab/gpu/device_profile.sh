#!/usr/bin/env bash
# Run on the device machine from the repo root: the kernels of a plan (lab/gpu/gpu_plan.py or
# lab/gpu/control_flow_plan.py) under Nsight Compute with the SourceCounters section, then each
# plan kernel's source page (CSV, CUDA and SASS lines: --print-source cuda,sass) packed into one
# JSON file, for `bankproof triton profile`. Usage: lab/gpu/device_profile.sh PLAN OUTDIR NAME
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
PLAN=${1:?plan.json}; OUT=${2:?outdir}; NAME=${3:-profile}
export PYTHONUNBUFFERED=1
ncu --section SourceCounters --import-source yes --cache-control none --clock-control none \
    -f -o "/tmp/$NAME" python3 -m lab.gpu.triton_kernels run "$PLAN" "/tmp/$NAME-launched.json" \
    > "/tmp/$NAME-run.log" 2>&1
echo "ncu rc=$?"
python3 - "$PLAN" "$OUT" "$NAME" <<'PY'
import json, subprocess, sys
from bankproof.gpu_checks.measure import parse_ncu_csv
plan_path, out, name = sys.argv[1:4]
plan = json.load(open(plan_path))
by_kernel = {}
for k in plan["kernels"]:
    by_kernel.setdefault(k["kernel"], []).append(k)
raw = subprocess.run(["ncu", "-i", f"/tmp/{name}.ncu-rep", "--csv", "--page", "raw", "--metrics", "launch__grid_size"],
                     capture_output=True, text=True).stdout
rows = parse_ncu_csv(raw)
seen = {}
exports = []
for r in rows:
    kern = r["Kernel Name"]
    if kern not in by_kernel:
        continue
    i = seen.get(kern, 0)
    seen[kern] = i + 1
    entry = by_kernel[kern][i] if i < len(by_kernel[kern]) else by_kernel[kern][-1]
    res = subprocess.run(["ncu", "-i", f"/tmp/{name}.ncu-rep", "--page", "source", "--csv", "--print-source",
                          "cuda,sass", "--launch-skip", r["ID"], "--launch-count", "1"], capture_output=True, text=True)
    exports.append({"name": entry["name"], "kernel": kern, "ncu_id": int(r["ID"]), "args": entry["args"],
                    "grid": entry.get("grid", [1, 1, 1]), "csv": res.stdout})
json.dump({"plan": plan_path, "triton": plan.get("triton"), "exports": exports}, open(f"{out}/{name}.json", "w"))
print(f"{len(exports)} kernels exported")
PY
