#!/usr/bin/env bash
# The public llm.c kernels compiled by nvcc 13.0.88 (the nvidia-cuda-nvcc wheel of the cuda extra;
# the device's nvcc is the same version) into examples/cuda/public/nvcc/nvcc_<file>.ptx. The
# NVRTC-only line that lends std::bool_constant is blanked (nvcc's host library has it); lines keep
# their numbers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SITE="$ROOT/.venv/lib/python3.11/site-packages/nvidia"
T=$(mktemp -d)
for f in "$ROOT"/examples/cuda/public/llmc_*.cu; do
  b=$(basename "$f")
  sed 's/^namespace std {.*bool_constant.*}$//' "$f" > "$T/$b"
  (cd "$T" && "$SITE/cu13/bin/nvcc" -ptx -arch=sm_90a -lineinfo -std=c++17 -I"$SITE/cuda_cccl/include" \
     -o "$ROOT/examples/cuda/public/nvcc/nvcc_${b%.cu}.ptx" "$b")
  sed -i "s#\"$T/#\"#" "$ROOT/examples/cuda/public/nvcc/nvcc_${b%.cu}.ptx"
done
rm -rf "$T"
