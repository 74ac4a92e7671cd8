"""Where the cp.async rule was extrapolated (issue 55, item 4): one warp's 4-, 8- and 16-byte
``cp.async.ca`` whose shared-side bank conflicts and global-side L1 bank conflicts are *nested* (one
side's conflicting lane pairs inside the other's) or *cross* (no pair in common), and shared atomics
by address and bank (same address, same bank, distinct banks). Each probe gives every lane its own
shared and global byte offsets.

    python -m lab.gpu.cp_async_cross plan PLAN.json
    ncu --csv --page raw --metrics $(python -m lab.gpu.cp_async_cross metrics) \\
        python -m lab.gpu.cp_async_cross run PLAN.json > NCU.csv
    python -m lab.gpu.cp_async_cross collect PLAN.json NCU.csv OUT.json

Shared side: lane ``i`` at bank group ``i % a`` and row ``i // a`` (``32 / a``-way conflicts
between lanes of one ``i % a``). Global side: lane ``i`` reads word ``p(i) % c`` of 128-byte line
``p(i) // c``, with ``p`` the identity (nested when ``c`` and ``a`` share classes), the transpose
(crossing) or a random permutation.

>>> len(plan()) > 200, plan()[0]["kind"]
(True, 'copy')
"""

from __future__ import annotations

import json
import random
import sys

from bankproof.gpu_checks.kernels import _HEADER
from bankproof.gpu_checks.measure import probe_cli
from bankproof.gpu_checks.metrics import LDGSTS

ATOM_METRICS = [
    "smsp__sass_inst_executed_op_shared_atom.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum",
]
METRICS = LDGSTS + ATOM_METRICS


def kernel_source() -> str:
    parts = [_HEADER]
    for width in (4, 8, 16):
        parts.append(
            f'extern "C" __global__ void k_cp{width}(const int* __restrict__ offs, unsigned mask, '
            "const unsigned char* __restrict__ src, const int* __restrict__ goffs, unsigned* __restrict__ out) {\n"
            "  PROLOGUE\n  unsigned long long g;\n"
            '  asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(src + goffs[lane]));\n'
            f'  if (on) asm volatile("cp.async.ca.shared.global [%0], [%1], {width};" :: "r"(addr), "l"(g) : "memory");\n'
            '  asm volatile("cp.async.wait_all;" ::: "memory");\n'
            "  out[lane] = r0;\n}\n"
        )
    for op in ("add.u32", "exch.b32", "max.u32"):
        name = op.split(".")[0]
        parts.append(
            f'extern "C" __global__ void k_atom_{name}(const int* __restrict__ offs, unsigned mask, '
            "const unsigned char* __restrict__ src, const int* __restrict__ goffs, unsigned* __restrict__ out) {\n"
            "  PROLOGUE\n"
            f'  if (on) asm volatile("atom.shared.{op} %0, [%1], %2;" : "=r"(r0) : "r"(addr), "r"(lane) : "memory");\n'
            "  out[lane] = r0;\n}\n"
        )
    return "\n".join(parts)


def _shared(a: int, width: int) -> list[int]:
    """32/a-way conflicts between lanes of one ``i % a`` (each its own row of 128 bytes)."""
    return [width * (i % a) + 128 * (i // a) * max(1, width // 4) for i in range(32)]


def _global(c: int, perm: list[int], width: int) -> list[int]:
    return [width * (perm[i] % c) + 128 * (perm[i] // c) * max(1, width // 4) for i in range(32)]


def plan(seed: int = 55) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    for width in (4, 8, 16):
        per_row = 128 // width
        groups = [g for g in (1, 2, 4, 8, 16, 32) if g <= 32]
        for a in groups:
            for c in groups:
                for how in ("same", "transpose", "random"):
                    if how == "same":
                        perm = list(range(32))
                    elif how == "transpose":
                        perm = [(i % c) * (32 // c) + i // c for i in range(32)]
                    else:
                        perm = rng.sample(range(32), 32)
                    if min(a, c) > per_row:
                        continue
                    out.append({"id": len(out), "kind": "copy", "probe": f"cp{width}", "width": width,
                                "shared_groups": a, "global_groups": c, "perm": how,
                                "byte_offsets": _shared(a, width), "global_offsets": _global(c, perm, width),
                                "mask": 0xFFFFFFFF})  # fmt: skip
    for name in ("add", "exch", "max"):
        for pattern, offs in (
            ("same address", [0] * 32),
            ("two addresses", [4 * (i % 2) for i in range(32)]),
            ("same bank", [128 * i for i in range(32)]),
            ("4-way bank", [4 * (i % 8) + 128 * (i // 8) for i in range(32)]),
            ("distinct banks", [4 * i for i in range(32)]),
            ("pairs on one word", [4 * (i // 2) for i in range(32)]),
            ("half warp", [4 * i for i in range(32)]),
        ):
            mask = 0xFFFF if pattern == "half warp" else 0xFFFFFFFF
            out.append({"id": len(out), "kind": "atomic", "probe": f"atom_{name}", "pattern": pattern,
                        "byte_offsets": offs, "global_offsets": [0] * 32, "mask": mask})  # fmt: skip
    return out


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    with open(plan_path) as fh:
        patterns = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    mod = cp.RawModule(code=kernel_source(), options=(f"-arch=sm_{arch}",))
    src = cp.zeros(1 << 20, dtype=cp.uint8)
    out = cp.empty(32, dtype=cp.uint32)
    for p in patterns:
        fn = mod.get_function(f"k_{p['probe']}")
        offs = cp.asarray(np.asarray(p["byte_offsets"], dtype=np.int32))
        goffs = cp.asarray(np.asarray(p["global_offsets"], dtype=np.int32))
        fn((1,), (32,), (offs, np.uint32(p["mask"]), src, goffs, out))
    cp.cuda.Device().synchronize()


if __name__ == "__main__":
    probe_cli(sys.argv[1:], plan, run, lambda p: f"k_{p['probe']}", METRICS)
