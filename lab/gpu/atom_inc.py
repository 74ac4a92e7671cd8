"""The increment ptxas makes of a shared atomic add of a constant whose result is unused:
``atom.shared.add.u32 _, [a], 1`` runs as SASS ``ATOMS.POPC.INC.32`` (CUB's atomic histogram, an
expert-count histogram: examples/cuda/data). One warp, every lane its own byte offset, patterns by
address and bank; Nsight Compute's shared-atomic counters per launch, and each launch's SASS
checked to hold the POPC.INC form.

    python -m lab.gpu.atom_inc plan PLAN.json
    ncu --csv --page raw --metrics $(python -m lab.gpu.atom_inc metrics) \\
        python -m lab.gpu.atom_inc run PLAN.json > NCU.csv
    python -m lab.gpu.atom_inc collect PLAN.json NCU.csv OUT.json

>>> len(plan()), plan()[0]["pattern"]
(14, 'same address')
"""

from __future__ import annotations

import json
import random
import sys

from bankproof.gpu_checks.kernels import _HEADER
from bankproof.gpu_checks.measure import probe_cli

METRICS = [
    "smsp__sass_inst_executed_op_shared_atom.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum",
]


def kernel_source() -> str:
    return _HEADER + (
        'extern "C" __global__ void k_atom_inc(const int* __restrict__ offs, unsigned mask, unsigned* __restrict__ out) {\n'
        "  PROLOGUE\n"
        '  if (on) asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(r0) : "r"(addr) : "memory");\n'
        "  out[lane] = 0;\n}\n"
    )


def plan(seed: int = 57) -> list[dict]:
    rng = random.Random(seed)
    pats = [
        ("same address", [0] * 32),
        ("two addresses", [4 * (i % 2) for i in range(32)]),
        ("same bank", [128 * i for i in range(32)]),
        ("4-way bank", [4 * (i % 8) + 128 * (i // 8) for i in range(32)]),
        ("distinct banks", [4 * i for i in range(32)]),
        ("pairs on one word", [4 * (i // 2) for i in range(32)]),
        ("two words a bank", [4 * (i % 16) + 128 * (i // 16) for i in range(32)]),
        ("two words a bank, repeated", [4 * (i % 8) + 128 * ((i // 8) % 2) for i in range(32)]),
        ("half warp", [4 * i for i in range(32)]),
    ]
    for k in range(5):  # random words among 64 (an expert count's) or 16 (a skewed histogram's)
        words = 64 if k < 3 else 16
        pats.append((f"random of {words} words #{k}", [4 * rng.randrange(words) for _ in range(32)]))
    return [{"id": n, "probe": "atom_inc", "pattern": p, "byte_offsets": offs,
             "mask": 0xFFFF if p == "half warp" else 0xFFFFFFFF} for n, (p, offs) in enumerate(pats)]  # fmt: skip


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    with open(plan_path) as fh:
        patterns = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    mod = cp.RawModule(code=kernel_source(), options=(f"-arch=sm_{arch}",))
    out = cp.empty(32, dtype=cp.uint32)
    fn = mod.get_function("k_atom_inc")
    for p in patterns:
        offs = cp.asarray(np.asarray(p["byte_offsets"], dtype=np.int32))
        fn((1,), (32,), (offs, np.uint32(p["mask"]), out))
    cp.cuda.Device().synchronize()


if __name__ == "__main__":
    probe_cli(sys.argv[1:], plan, run, lambda p: "k_atom_inc", METRICS)
