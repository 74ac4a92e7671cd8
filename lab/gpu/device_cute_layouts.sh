#!/usr/bin/env bash
# Run on the device machine from the repo root: every CuTe example (examples/cute_*.toml) as a
# whole layout run, every element checked and the wavefronts counted by Nsight Compute, the
# cp.async.cg examples again as cp.async.ca (whose wavefronts a counter sees). The layout half of
# device_cute_examples.sh (which runs this, then its timing patterns). Usage: lab/gpu/device_cute_layouts.sh OUTDIR
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}
export PYTHONUNBUFFERED=1
mkdir -p /tmp/ca
for f in examples/cute_*.toml; do
  grep -q CACHEGLOBAL "$f" && sed 's/SM80_CP_ASYNC_CACHEGLOBAL/SM80_CP_ASYNC_CACHEALWAYS/' "$f" > "/tmp/ca/ca_$(basename "$f")"
done
METRICS="$(python3 -m bankproof.gpu_checks.layout_runs metrics)"
python3 -m bankproof.verifier.api.gpu plan /tmp/cplan.json examples/cute_*.toml /tmp/ca/*.toml
ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
    python3 -m bankproof.gpu_checks.layout_runs run /tmp/cplan.json /tmp/cout.npz > /tmp/cncu.csv 2> "$OUT/ncu.err"
echo "ncu rc=$?"
python3 -m bankproof.gpu_checks.layout_runs collect /tmp/cplan.json /tmp/cout.npz /tmp/cncu.csv "$OUT/cute-examples.json"
