#!/usr/bin/env bash
# On the device: the PTX semantics oracle (lab/gpu/ptx_semantics.py), every probe once.
set -euo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m lab.gpu.ptx_semantics run "${OUT:-.}/ptx-semantics.json"
