#!/usr/bin/env bash
# On the device, from the repo root: cp.async crossing/nested sweep and shared atomics
# (lab/gpu/cp_async_cross.py) under Nsight Compute, into $OUT/cp_async_cross.json, with the SASS.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
export PYTHONUNBUFFERED=1
python3 -c "from lab.gpu.cp_async_cross import kernel_source; print(kernel_source())" > /tmp/cross.cu
nvcc -arch=sm_90 -cubin -o /tmp/cross.cubin /tmp/cross.cu && cuobjdump -sass /tmp/cross.cubin \
  | grep -E "Function|LDGSTS|ATOMS|LDS|BRA" > "$OUT/cross_sass.txt"
python3 -m lab.gpu.cp_async_cross plan /tmp/xplan.json
start=$(date +%s)
ncu --csv --page raw --cache-control none --clock-control none \
    --metrics "$(python3 -m lab.gpu.cp_async_cross metrics)" \
    python3 -m lab.gpu.cp_async_cross run /tmp/xplan.json > /tmp/xncu.csv 2> "$OUT/cross_ncu.err"
echo "ncu rc=$? seconds=$(( $(date +%s) - start ))"
python3 -m lab.gpu.cp_async_cross collect /tmp/xplan.json /tmp/xncu.csv "$OUT/cp_async_cross.json"
tail -3 "$OUT/cross_ncu.err"
