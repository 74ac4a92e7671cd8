#!/usr/bin/env bash
# Run on the device machine from the repo root: the lane groups (phases) of 16-byte cp.async
# (.ca and .cg) next to st.shared.v4, counted by Nsight Compute and timed with clock64.
# Usage: lab/gpu/device_cp_async_phases.sh OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
export PYTHONUNBUFFERED=1
M=lab.gpu.cp_async_phases
python3 -m $M patterns "$OUT/patterns.json"
python3 -m $M plan /tmp/pplan.json "$OUT/patterns.json"
python3 -c "from $M import kernel_source; print(kernel_source())" > /tmp/pp.cu
nvcc -arch=sm_90 -cubin -o /tmp/pp.cubin /tmp/pp.cu 2>/dev/null && cuobjdump -sass /tmp/pp.cubin \
  | grep -E "Function|LDGSTS|STS" > "$OUT/sass.txt"
start=$(date +%s)
ncu --csv --page raw --cache-control none --clock-control none --metrics "$(python3 -m $M metrics)" \
    python3 -m $M run /tmp/pplan.json > /tmp/pncu.csv 2> "$OUT/ncu.err"
echo "ncu rc=$? seconds=$(( $(date +%s) - start ))"
python3 -m $M collect /tmp/pplan.json /tmp/pncu.csv "$OUT/cp-async-phases.json"
python3 -m $M time "$OUT/patterns.json" "$OUT/cp-async-phase-times.json"
echo "time rc=$?"
tail -3 "$OUT/ncu.err"
