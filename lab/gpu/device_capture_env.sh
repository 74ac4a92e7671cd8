#!/usr/bin/env bash
# On the device, from the repo root: the torch.compile'd model captured through the environment
# switch alone (what `bankproof triton capture DIR -- CMD` sets up: a sitecustomize that installs
# the capture from BANKPROOF_CAPTURE before the program imports PyTorch). Results: $OUT/capture_env.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
S="$(mktemp -d)"
printf 'from bankproof.verifier.triton.capture import install_from_env\ninstall_from_env()\n' > "$S/sitecustomize.py"
TORCHINDUCTOR_CACHE_DIR="$(mktemp -d)" TRITON_CACHE_DIR="$(mktemp -d)" BANKPROOF_CAPTURE="$OUT/capture_env" \
  PYTHONPATH="$S:$PYTHONPATH" timeout 200 python3 -m lab.gpu.inductor_model > "$OUT/env.log" 2>&1
echo "env rc=$?"; tail -2 "$OUT/env.log"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['compiles']), 'compiles', len(d['launches']), 'launches', d['errors'])" "$OUT/capture_env/capture.json"
tar -czf "$OUT/capture_env.tar.gz" -C "$OUT" capture_env && rm -rf "$OUT/capture_env"
