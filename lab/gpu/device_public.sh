#!/usr/bin/env bash
# Run on the device machine from the repo root, with `python -m lab.gpu.gpu_plan build/pub sm90
# <kernels files>` carried: every kernel under Nsight Compute twice (raw counters: the record and
# its run-to-run repeat), then with SourceCounters (source pages), packed into one JSON by
# lab/gpu/pack_record.py; then the L1 contention experiment (lab/gpu/l1_contention.py).
# Usage: lab/gpu/device_public.sh PLAN OUTDIR (SKIP_CONTENTION=1: the kernels alone)
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
PLAN=${1:?plan.json}; OUT=${2:?outdir}
export PYTHONUNBUFFERED=1
T0=$SECONDS
METRICS="$(python3 -m lab.gpu.triton_kernels metrics)"
for pass in 1 2; do
  ncu --csv --page raw --cache-control none --clock-control none --metrics "$METRICS" \
      python3 -m lab.gpu.triton_kernels run "$PLAN" /tmp/launched$pass.json > /tmp/ncu$pass.csv 2> "$OUT/ncu$pass.err"
  echo "ncu pass $pass rc=$? ($((SECONDS - T0)) s)"
  python3 -m lab.gpu.triton_kernels collect "$PLAN" /tmp/ncu$pass.csv /tmp/counters$pass.json /tmp/launched$pass.json
done
bash "$(dirname "$0")/device_profile.sh" "$PLAN" /tmp profile
echo "profile done ($((SECONDS - T0)) s)"
python3 -m lab.gpu.pack_record "$PLAN" /tmp/counters1.json /tmp/counters2.json /tmp/profile.json "$OUT/public.json"
if [ -z "${SKIP_CONTENTION:-}" ]; then
  ncu --csv --page raw --cache-control none --clock-control none --metrics "$(python3 -m lab.gpu.l1_contention metrics)" \
      python3 -m lab.gpu.l1_contention run > /tmp/contention.csv 2> "$OUT/contention.err"
  echo "contention rc=$? ($((SECONDS - T0)) s)"
  python3 -m lab.gpu.l1_contention collect /tmp/contention.csv "$OUT/contention.json"
fi
tail -3 "$OUT"/ncu1.err
