#!/usr/bin/env bash
# On the device, from the repo root: a torch.compile'd model captured (the API, then the CLI's
# environment switch) and its second call measured by Nsight Compute. Results under $OUT:
# inductor-truth.csv, capture.tar.gz, capture_env.tar.gz (device_capture_env.sh), logs.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
METRICS=$(python3 -c "from lab.gpu.kernel_truth import METRICS; print(','.join(METRICS))")
export TORCHINDUCTOR_CACHE_DIR="$(mktemp -d)" TRITON_CACHE_DIR="$(mktemp -d)"
timeout 300 ncu --nvtx --nvtx-include "measure/" --metrics "$METRICS" --csv --page raw \
  python3 -m lab.gpu.capture_inductor "$OUT/capture" > "$OUT/inductor-truth.csv" 2> "$OUT/inductor-truth.log"
echo "ncu rc=$?"; grep -c '"triton_' "$OUT/inductor-truth.csv"; tail -3 "$OUT/inductor-truth.log"
bash "$(dirname "$0")/device_capture_env.sh"
tar -czf "$OUT/capture.tar.gz" -C "$OUT" capture && rm -rf "$OUT/capture"
