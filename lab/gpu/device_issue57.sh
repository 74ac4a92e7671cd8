#!/usr/bin/env bash
# On the device, from the repo root: the kernels whose loops, branches and addresses follow the data a
# launch loads (examples/cuda/data, prepared here into lab/gpu/truth_data by
# `python -m lab.gpu.kernel_truth prepare lab/gpu/truth_data examples/cuda/data`: each case's PTX and
# the bytes its buffers hold), launched with that data under Nsight Compute. Results under $OUT:
# kernel-truth.json.gz, launch.log.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ptxas --version | tail -1
T0=$SECONDS
DEADLINE=${DEADLINE:-420} bash "$(dirname "$0")/device_kernel_truth.sh" lab/gpu/truth_data "$OUT" ${CASES:-}
echo "kernel truth done ($((SECONDS - T0)) s)"
python3 -m lab.gpu.capture_probe "$OUT/capture" > "$OUT/capture.log" 2>&1; echo "capture rc=$?"; tail -5 "$OUT/capture.log"
tar -czf "$OUT/capture.tar.gz" -C "$OUT" capture && rm -rf "$OUT/capture"
echo "all done ($((SECONDS - T0)) s)"
