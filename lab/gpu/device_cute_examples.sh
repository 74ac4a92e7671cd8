#!/usr/bin/env bash
# Run on the device machine from the repo root: the CuTe examples (examples/cute_*.toml) as whole
# layout runs, every element checked and the wavefronts counted by Nsight Compute; the cp.async.cg
# examples again as cp.async.ca (whose wavefronts a counter sees); then the cp.async timing
# patterns. Usage: lab/gpu/device_cute_examples.sh OUTDIR
set -uo pipefail
OUT=${1:?outdir}
"$(dirname "$0")/device_cute_layouts.sh" "$OUT"
source "$(dirname "$0")/device_env.sh"
export PYTHONUNBUFFERED=1
M=lab.gpu.cp_async_phases
python3 -m $M patterns "$OUT/patterns.json"
python3 -m $M time "$OUT/patterns.json" "$OUT/cp-async-phase-times.json" | grep -v random
echo "time rc=$?"
