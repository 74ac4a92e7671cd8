#!/usr/bin/env bash
# Run on the device machine from the repo root: cp.async in warps predicated off (lab/gpu/dead_warps.py).
# Usage: lab/gpu/device_dead_warps.sh OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version; } > "$OUT/env.txt" 2>&1
python3 -m lab.gpu.dead_warps source > /tmp/dw.cu
nvcc -arch=sm_90 -cubin -o /tmp/dw.cubin /tmp/dw.cu && cuobjdump -sass /tmp/dw.cubin \
  | grep -E "Function|LDGSTS|BRA|ISETP|EXIT" > /tmp/dw_sass.txt
ncu --csv --page raw --cache-control none --clock-control none \
    --metrics "$(python3 -m lab.gpu.dead_warps metrics)" python3 -m lab.gpu.dead_warps run > /tmp/dw.csv 2> "$OUT/ncu.err"
echo "ncu rc=$?"
python3 -m lab.gpu.dead_warps collect /tmp/dw.csv "$OUT/dead_warps.json" /tmp/dw_sass.txt
tail -3 "$OUT/ncu.err"
