#!/usr/bin/env bash
# On the device, from the repo root: a torch.compile'd model captured (the API, then the CLI's
# environment switch) and its second call measured by Nsight Compute. Results under $OUT:
# inductor-truth.csv, capture.tar.gz (capture/ and capture_cli/), logs.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
METRICS=$(python3 -c "from lab.gpu.kernel_truth import METRICS; print(','.join(METRICS))")
export TORCHINDUCTOR_CACHE_DIR="$(mktemp -d)" TRITON_CACHE_DIR="$(mktemp -d)"
timeout 300 ncu --nvtx --nvtx-include "measure/" --metrics "$METRICS" --csv --page raw \
  python3 -m lab.gpu.capture_inductor "$OUT/capture" > "$OUT/inductor-truth.csv" 2> "$OUT/inductor-truth.log"
echo "ncu rc=$?"; grep -c '"triton_' "$OUT/inductor-truth.csv"; tail -3 "$OUT/inductor-truth.log"
export TORCHINDUCTOR_CACHE_DIR="$(mktemp -d)" TRITON_CACHE_DIR="$(mktemp -d)"
timeout 200 python3 -c "import sys; from bankproof.verifier.cli.main import cli; sys.exit(cli())" triton capture "$OUT/capture_cli" -- python3 -m lab.gpu.inductor_model > "$OUT/cli.log" 2>&1
echo "cli rc=$?"; tail -3 "$OUT/cli.log"; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['compiles']), 'compiles', len(d['launches']), 'launches', d['errors'])" "$OUT/capture_cli/capture.json"
tar -czf "$OUT/capture.tar.gz" -C "$OUT" capture capture_cli && rm -rf "$OUT/capture" "$OUT/capture_cli"
