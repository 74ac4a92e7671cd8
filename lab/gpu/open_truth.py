"""GPU truth for ``bankproof kernel --open``: ``examples/cuda/runtime_pitch.cu`` compiled here by
NVRTC and launched on the device once per pitch of the range the tests leave open (one CTA of
32x8 threads), each under Nsight Compute, packed like :mod:`lab.gpu.kernel_truth`'s record.

    python -m lab.gpu.open_truth lab/gpu/open_truth_build          # here: PTX + plan.json
    lab/gpu/device_kernel_truth.sh lab/gpu/open_truth_build $OUT   # on the device
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PITCHES = range(32, 65)
DYNAMIC_SMEM = 16384


def prepare(folder: str) -> None:
    from bankproof.verifier.api.kernel import read_source

    src, names = read_source(Path("examples/cuda/runtime_pitch.cu"), "pitched_transpose")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    pos = {v: k for k, v in names.items()}
    plan = []
    for pitch in PITCHES:
        name = f"runtime_pitch_{pitch}"
        (out / f"{name}.ptx").write_text(src.module.text)
        params = []
        for i, (ptype, pname) in enumerate(src.code.params):
            cname = pos.get(i, pname)
            if cname in ("out", "in"):
                params.append({"kind": "buffer", "bytes": 4096})
            else:
                params.append({"kind": "value", "type": ptype, "value": pitch})
        plan.append({"name": name, "kernel": src.code.name, "ptx": f"{name}.ptx", "cubin": None,
                     "block": [32, 8, 1], "dynamic_smem": DYNAMIC_SMEM, "params": params})  # fmt: skip
    (out / "plan.json").write_text(json.dumps(plan, indent=1))
    print(f"{len(plan)} launches prepared in {out}")


if __name__ == "__main__":
    prepare(sys.argv[1])
