#!/usr/bin/env bash
# On the device machine, from the repo root: launch each prepared kernel case under Nsight Compute
# (SASS-level metrics and the SourceCounters section; one report per case, so a failing case costs
# only itself), then pack one record. DEADLINE (seconds of this shell): cases after it are skipped. Usage: lab/gpu/device_kernel_truth.sh FOLDER OUTDIR [CASE...]
set -uo pipefail
DIR=${1:?folder}; OUT=${2:?outdir}; shift 2
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
METRICS=$(python3 -c "from lab.gpu.kernel_truth import METRICS; print(','.join(METRICS))")
CASES=${*:-$(python3 -c "import json; print(' '.join(c['name'] for c in json.load(open('$DIR/plan.json'))))")}
mkdir -p /tmp/reps
for c in $CASES; do
  if [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -ge "$DEADLINE" ]; then echo "$c skipped (deadline)"; continue; fi
  ncu --section SourceCounters --metrics "$METRICS" --import-source yes --cache-control none --clock-control none \
      -f -o "/tmp/reps/$c" python3 -m lab.gpu.kernel_truth launch "$DIR" "$c" >> "$OUT/launch.log" 2>&1
  echo "$c rc=$?"
done
python3 -m lab.gpu.kernel_truth pack "$DIR" /tmp/reps "$OUT/kernel-truth.json"
gzip -9 "$OUT/kernel-truth.json"
