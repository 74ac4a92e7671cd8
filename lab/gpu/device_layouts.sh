#!/usr/bin/env bash
# Run on the device machine from the repo root: whole layouts on the GPU, then the transpose
# benchmark. Usage: lab/gpu/device_layouts.sh OUTDIR [N_RANDOM]
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}; N=${2:-120}
export PYTHONUNBUFFERED=1
METRICS="$(python3 -m bankproof.gpu_checks.layout_runs metrics)"
python3 -m bankproof.verifier.api.gpu plan /tmp/lplan.json examples/*.toml --random "$N"
ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
    python3 -m bankproof.gpu_checks.layout_runs run /tmp/lplan.json /tmp/lout.npz > /tmp/lncu.csv 2> "$OUT/layout_ncu.err"
echo "layout ncu rc=$?"
python3 -m bankproof.gpu_checks.layout_runs collect /tmp/lplan.json /tmp/lout.npz /tmp/lncu.csv "$OUT/layout_runs.json"
python3 -m lab.gpu.gpu_transpose "$OUT/transpose.json"
ncu --csv --page raw --metrics "$METRICS" -k regex:k_bench --launch-skip 0 \
    python3 -m lab.gpu.gpu_transpose /tmp/transpose_ncu_run.json --ncu > "$OUT/transpose_ncu.csv" 2> "$OUT/transpose_ncu.err"
echo "transpose ncu rc=$?"
