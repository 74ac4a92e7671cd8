#!/usr/bin/env bash
# On the device, from the repo root: the eight CuTe DSL kernels (examples/cuda/cute_dsl, prepared
# into lab/gpu/truth_cute_dsl by `python -m lab.gpu.kernel_truth prepare lab/gpu/truth_cute_dsl
# examples/cuda/cute_dsl`) launched under Nsight Compute. Results under $OUT: kernel-truth.json.gz.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
DEADLINE=${DEADLINE:-400} bash "$(dirname "$0")/device_kernel_truth.sh" lab/gpu/truth_cute_dsl "$OUT" ${CASES:-}
