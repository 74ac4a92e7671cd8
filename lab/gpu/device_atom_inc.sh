#!/usr/bin/env bash
# On the device, from the repo root: the ATOMS.POPC.INC probe (lab/gpu/atom_inc.py) under Nsight
# Compute, and the SASS of its kernel. Results under $OUT: atom-inc.json, atom-inc.sass.txt.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
python3 -m lab.gpu.atom_inc plan /tmp/atom_plan.json
ncu --csv --page raw --metrics "$(python3 -m lab.gpu.atom_inc metrics)" python3 -m lab.gpu.atom_inc run /tmp/atom_plan.json > /tmp/atom.csv 2> "$OUT/atom-inc.log"
python3 -m lab.gpu.atom_inc collect /tmp/atom_plan.json /tmp/atom.csv "$OUT/atom-inc.json" && gzip -9 "$OUT/atom-inc.json"
python3 - <<'PY' > "$OUT/atom-inc.sass.txt"
import cupy as cp, subprocess, tempfile, os
from lab.gpu.atom_inc import kernel_source
d = tempfile.mkdtemp(); src = os.path.join(d, "k.cu"); open(src, "w").write(kernel_source())
subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", os.path.join(d, "k.cubin"), src], check=True)
print(subprocess.run(["cuobjdump", "-sass", os.path.join(d, "k.cubin")], capture_output=True, text=True).stdout)
PY
grep -c "ATOMS.POPC.INC" "$OUT/atom-inc.sass.txt"
