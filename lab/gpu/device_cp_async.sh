#!/usr/bin/env bash
# Run on the device machine from the repo root: measure cp.async (LDGSTS) shared-memory writes.
# With --zfill, the same store patterns with a source size of 0 (zero-fill), into cp_async_zfill.json.
# With --sweep, contiguous shared bytes from global strides and bases (cp_async_sweep.json).
# Usage: lab/gpu/device_cp_async.sh OUTDIR [PER_KIND] [--zfill | --sweep]
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}; PER=${2:-80}; ZFILL=${3:-}
NAME=cp_async${ZFILL:+_${ZFILL#--}}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version; } > "$OUT/env.txt" 2>&1
python3 -c "from lab.gpu.cp_async import kernel_source; print(kernel_source())" > "$OUT/cp_async.cu"
nvcc -arch=sm_90 -cubin -o /tmp/cp.cubin "$OUT/cp_async.cu" && cuobjdump -sass /tmp/cp.cubin \
  | grep -E "Function|LDGSTS|LDGDEPBAR|DEPBAR" > "$OUT/sass.txt"
python3 -m lab.gpu.cp_async plan /tmp/cplan.json --per-kind "$PER" $ZFILL
start=$(date +%s)
ncu --csv --page raw --cache-control none --clock-control none \
    --metrics "$(python3 -m lab.gpu.cp_async metrics)" \
    python3 -m lab.gpu.cp_async run /tmp/cplan.json > /tmp/cncu.csv 2> "$OUT/ncu.err"
echo "ncu rc=$? seconds=$(( $(date +%s) - start ))"
python3 -m lab.gpu.cp_async collect /tmp/cplan.json /tmp/cncu.csv "$OUT/$NAME.json"
tail -3 "$OUT/ncu.err"
