#!/usr/bin/env bash
# On the device, from the repo root: the captured seg_colsum launch's CTA 0 under Nsight Compute.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
METRICS=$(python3 -c "from lab.gpu.kernel_truth import METRICS; print(','.join(METRICS))")
ncu --metrics "$METRICS" --csv --page raw python3 -m lab.gpu.capture_truth > "$OUT/capture-truth.csv" 2> "$OUT/capture-truth.log"
echo "rc=$?"; grep -c seg_colsum "$OUT/capture-truth.csv"
