#!/usr/bin/env bash
# On the device, from the repo root: the PTX semantics oracle, then the public corpus
# (examples/cuda/public, prepared here into lab/gpu/truth_public by
# `python -m lab.gpu.kernel_truth prepare lab/gpu/truth_public examples/cuda/public`) under Nsight
# Compute. Results under $OUT: ptx-semantics.json.gz, kernel-truth.json.gz, launch.log.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ptxas --version | tail -1
T0=$SECONDS
python3 -m lab.gpu.ptx_semantics run "$OUT/ptx-semantics.json" && gzip -9 "$OUT/ptx-semantics.json"
echo "semantics done ($((SECONDS - T0)) s)"
DEADLINE=${DEADLINE:-420} bash "$(dirname "$0")/device_kernel_truth.sh" lab/gpu/truth_public "$OUT" ${CASES:-}
echo "kernel truth done ($((SECONDS - T0)) s)"
