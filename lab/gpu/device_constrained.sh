#!/usr/bin/env bash
# Run on the device machine from the repo root: the layouts of constrained synthesis
# (lab/gpu/constrained/*.toml, written here by `python -m lab.gpu.constrained_specs lab/gpu/constrained`:
# every layout the engines take for examples/synth/*.toml, the unconstrained optimum, CUTLASS's SW128
# atom for the epilogue) as whole layout runs, every element checked and the wavefronts counted by
# Nsight Compute. Usage: lab/gpu/device_constrained.sh OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
export PYTHONUNBUFFERED=1
METRICS="$(python3 -m bankproof.gpu_checks.layout_runs metrics)"
python3 -m bankproof.verifier.api.gpu plan /tmp/kplan.json lab/gpu/constrained/*.toml
echo "plan rc=$?"
ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
    python3 -m bankproof.gpu_checks.layout_runs run /tmp/kplan.json /tmp/kout.npz > /tmp/kncu.csv 2> "$OUT/ncu.err"
echo "ncu rc=$?"
python3 -m bankproof.gpu_checks.layout_runs collect /tmp/kplan.json /tmp/kout.npz /tmp/kncu.csv "$OUT/constrained.json"
echo "collect rc=$?"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
