#!/usr/bin/env bash
# Run on the device machine from the repo root: the searched optima next to §5.4 with the common
# vector (lab/gpu/synth_optima_gpu.py), every element checked and the wavefronts counted by Nsight
# Compute, then each case's round trip timed. Usage: lab/gpu/device_synth_optima.sh OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
export PYTHONUNBUFFERED=1
METRICS="$(python3 -m bankproof.gpu_checks.layout_runs metrics)"
python3 -m lab.gpu.synth_optima_gpu /tmp/oplan.json > "$OUT/plan.txt"
echo "plan rc=$?"
ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
    python3 -m bankproof.gpu_checks.layout_runs run /tmp/oplan.json /tmp/oout.npz > /tmp/oncu.csv 2> "$OUT/ncu.err"
echo "ncu rc=$?"
python3 -m bankproof.gpu_checks.layout_runs collect /tmp/oplan.json /tmp/oout.npz /tmp/oncu.csv "$OUT/synth-optima.json"
python3 -m bankproof.gpu_checks.layout_runs time /tmp/oplan.json "$OUT/synth-optima-times.json"
echo "time rc=$?"
