#!/usr/bin/env bash
# Run on the device machine from the repo root: the Hopper engines' bytes (lab/gpu/engines.py).
# Usage: lab/gpu/device_engines.sh OUTDIR [mixed]   (writes OUTDIR/engines.json; intermediates in /tmp/eng;
# "mixed": only the TMA-tile probes (TMA loads read by wgmma/ldmatrix, TMA stores), no ncu)
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
OUT=${1:?outdir}; W=/tmp/eng; mkdir -p $W
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version; nvcc --version | tail -1; } > $W/env.txt 2>&1
nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o $W/probe lab/gpu/engines_probe.cu -lcuda 2> $W/nvcc.err || { tail -20 $W/nvcc.err; exit 1; }
cuobjdump -sass $W/probe | grep -E "Function|GMMA|UTMALDG|LDSM" > $W/sass.txt
for s in tma gmma mixed boff random; do python3 -m lab.gpu.engines plan $s > $W/plan_$s.txt; done
if [ "${2:-}" = random ]; then
  timeout 300 $W/probe < $W/plan_random.txt > $W/random.jsonl 2>&1; echo "random rc=$?"
  timeout 250 ncu --csv --page raw --cache-control none --clock-control none --metrics "$(python3 -m lab.gpu.engines metrics)" \
    $W/probe < $W/plan_random.txt > $W/ncu_random.csv 2> $W/ncu_random.err; echo "ncu random rc=$?"
  python3 -m lab.gpu.engines pack $W "$OUT/engines.json"; grep -c error $W/random.jsonl; exit 0
fi
if [ "${2:-}" = mixed ]; then
  timeout 300 $W/probe < $W/plan_mixed.txt > $W/mixed.jsonl 2>&1; echo "mixed rc=$?"
  python3 -m lab.gpu.engines pack $W "$OUT/engines.json"; grep -c error $W/mixed.jsonl; exit 0
fi
# TMA probes one process each: a refused copy can fault the context.
while read -r line; do echo "$line" | timeout 60 $W/probe >> $W/tma.jsonl 2>&1 || echo "{\"error\": \"rc $?\", \"line\": \"$line\"}" >> $W/tma.jsonl; done < $W/plan_tma.txt
for s in gmma mixed boff; do timeout 300 $W/probe < $W/plan_$s.txt > $W/$s.jsonl 2>&1; echo "$s rc=$?"; done
M=$(python3 -m lab.gpu.engines metrics); MT=$(python3 -m lab.gpu.engines metrics tma)
NCU="ncu --csv --page raw --cache-control none --clock-control none"
for s in gmma boff; do timeout 250 $NCU --metrics "$M" $W/probe < $W/plan_$s.txt > $W/ncu_$s.csv 2> $W/ncu_$s.err; echo "ncu $s rc=$?"; done
grep -E "^tma . . (0|128|256|384|512) [0-9]+ 0$" $W/plan_tma.txt | grep -v "tma 2 3 0 256\|tma 2 1 0 64\|tma 2 0 0 256" > $W/plan_tma_ok.txt
grep -E "^tma 2 [13] 0 [0-9]+ (16|32|64|128)$" $W/plan_tma.txt >> $W/plan_tma_ok.txt
timeout 200 $NCU --metrics "$MT" $W/probe < $W/plan_tma_ok.txt > $W/ncu_tma.csv 2> $W/ncu_tma.err; echo "ncu tma rc=$?"
cp $W/plan_tma_ok.txt $W/tma_ncu_plan.txt
python3 -m lab.gpu.engines pack $W "$OUT/engines.json"
tail -n 3 $W/ncu_gmma.err $W/ncu_tma.err $W/ncu_boff.err; grep -c error $W/*.jsonl
