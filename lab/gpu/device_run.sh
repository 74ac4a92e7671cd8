#!/usr/bin/env bash
# Run on the device machine from the repo root: measure single instructions with ncu.
# Usage: lab/gpu/device_run.sh OUTDIR [plan args...]   (e.g. --per-kind 70, or --limit 96)
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}; shift
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version; \
  python3 -c "import cupy; print('cupy', cupy.__version__)"; } > "$OUT/env.txt" 2>&1
python3 -c "from bankproof.gpu_checks.kernels import kernel_source; print(kernel_source(90))" > "$OUT/probes.cu"
nvcc -arch=sm_90 -cubin -o /tmp/probes.cubin "$OUT/probes.cu" && cuobjdump -sass /tmp/probes.cubin \
  | grep -E "Function|LDS|STS|LDSM|STSM" > "$OUT/sass.txt"
python3 -m bankproof.gpu_checks.measure plan "$OUT/plan.json" "$@"
start=$(date +%s)
ncu --csv --page raw --cache-control none --clock-control none \
    --metrics "$(python3 -m bankproof.gpu_checks.measure metrics)" \
    python3 -m bankproof.gpu_checks.measure run "$OUT/plan.json" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu rc=$? seconds=$(( $(date +%s) - start ))"
python3 -m bankproof.gpu_checks.measure collect "$OUT/plan.json" "$OUT/ncu.csv" "$OUT/results.json"
tail -5 "$OUT/ncu.err"
