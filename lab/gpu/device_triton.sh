#!/usr/bin/env bash
# Run on the device machine from the repo root, with the cubins and plan written here by
# `python -m lab.gpu.gpu_plan build/tk` carried along:
# whole Triton kernels launched once each (one CTA) under Nsight Compute.
# Usage: lab/gpu/device_triton.sh PLAN OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
PLAN=${1:?plan.json}; OUT=${2:?outdir}
export PYTHONUNBUFFERED=1
python3 -m lab.gpu.triton_kernels run "$PLAN" "$OUT/launched.json" > "$OUT/triton_run.log" 2>&1
echo "plain run rc=$? ($(grep -c '^ran ' "$OUT/triton_run.log") kernels)"
METRICS="$(python3 -m lab.gpu.triton_kernels metrics)"
ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
    python3 -m lab.gpu.triton_kernels run "$PLAN" /tmp/launched.json > /tmp/tk_ncu.csv 2> "$OUT/triton_ncu.err"
echo "ncu rc=$?"
cp /tmp/tk_ncu.csv "$OUT/triton_ncu.csv"
python3 -m lab.gpu.triton_kernels collect "$PLAN" /tmp/tk_ncu.csv "$OUT/triton_kernels.json" /tmp/launched.json
