#!/usr/bin/env bash
# Run on the device machine from the repo root: zero-fill cp.async probes (source size 0), the
# same patterns as lab/gpu/device_cp_async.sh. Usage: lab/gpu/device_cp_async_zfill.sh OUTDIR [PER_KIND]
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}; PER=${2:-60}
export PYTHONUNBUFFERED=1
python3 -m lab.gpu.cp_async plan /tmp/zplan.json --per-kind "$PER" --zfill
ncu --csv --page raw --cache-control none --clock-control none \
    --metrics "$(python3 -m lab.gpu.cp_async metrics)" \
    python3 -m lab.gpu.cp_async run /tmp/zplan.json > /tmp/zncu.csv 2> "$OUT/zfill_ncu.err"
echo "ncu rc=$?"
python3 -m lab.gpu.cp_async collect /tmp/zplan.json /tmp/zncu.csv "$OUT/cp_async_zfill.json"
tail -3 "$OUT/zfill_ncu.err"
