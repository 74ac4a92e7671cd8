"""Measure ``cp.async`` (LDGSTS) writes into shared memory, to test the assumption that they cost
what a shared store of the same width costs (the Triton scan counts them so).

    python -m lab.gpu.cp_async plan PLAN.json [--per-kind N] [--zfill | --sweep]
    ncu --csv --page raw --metrics $(python -m lab.gpu.cp_async metrics) \\
        python -m lab.gpu.cp_async run PLAN.json > NCU.csv
    python -m lab.gpu.cp_async collect PLAN.json NCU.csv RESULTS.json

A probe is one warp issuing one ``cp.async.{ca,cg}.shared.global`` of 4, 8 or 16 bytes per active
lane (lane i copies from ``global_stride * i``: the copy width, a coalesced warp as Triton emits,
or 16 bytes), then ``cp.async.wait_all``. The shared-side byte offsets are the store patterns of the
single-instruction measurements (``gpu_checks.patterns``) for the store of the same width.

>>> src = kernel_source()
>>> "cp.async.cg.shared.global [%0], [%1], 16;" in src, KINDS["cp16cg"]
(True, ('cg', 16, 'st128'))
"""

from __future__ import annotations

import json
import random
import sys

from bankproof.gpu_checks.kernels import _HEADER
from bankproof.gpu_checks.measure import environment, match_launches
from bankproof.gpu_checks.metrics import LDGSTS
from bankproof.gpu_checks.patterns import _lane_patterns
from bankproof.models.hardware import instruction

KINDS = {  # probe name -> (cache mode, bytes per lane, the store whose patterns and cost it shares)
    "cp4": ("ca", 4, "st32"),
    "cp8": ("ca", 8, "st64"),
    "cp16": ("ca", 16, "st128"),
    "cp16cg": ("cg", 16, "st128"),
}
# The same copies with a source size of 0 (``cp.async ..., N, 0``: shared bytes zero-filled, no
# global read), as Triton issues for masked-off and pipelined-past-the-end copies.
ZFILL_KINDS = {f"{name}z": kind for name, kind in KINDS.items()}


def kernel_source() -> str:
    """One probe kernel per kind."""
    parts = [_HEADER]
    for name, (mode, width, _) in {**KINDS, **ZFILL_KINDS}.items():
        size = ", 0" if name.endswith("z") else ""
        parts.append(
            f'extern "C" __global__ void k_{name}(const int* __restrict__ offs, unsigned mask, '
            "const unsigned char* __restrict__ src, unsigned gstride, unsigned* __restrict__ out) {\n"
            "  PROLOGUE\n  unsigned long long g;\n"
            '  asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(src + gstride * lane));\n'
            f'  if (on) asm volatile("cp.async.{mode}.shared.global [%0], [%1], {width}{size};" '
            ':: "r"(addr), "l"(g) : "memory");\n'
            '  asm volatile("cp.async.wait_all;" ::: "memory");\n'
            "  out[lane] = r0;\n}\n"
        )
    return "\n".join(parts)


def plan(
    seed: int = 2026, per_kind: int = 100, strides: tuple[int, ...] = (0, 16), zfill: bool = False
) -> list[dict]:
    """Store patterns of each width, one list per probe kind and global stride (bytes between
    consecutive lanes' global sources; 0 = the copy width, a coalesced warp), in launch order."""
    rng = random.Random(seed)
    out = []
    for stride in strides:
        for name, (_, width, store) in (ZFILL_KINDS if zfill else KINDS).items():
            for family, offs, mask in _lane_patterns(instruction(store), rng, per_kind)[:per_kind]:
                out.append({"id": len(out), "probe": name, "instr": store, "family": family,
                            "global_stride": stride or width, "byte_offsets": offs, "mask": mask})  # fmt: skip
    return out


LDGSTS_METRICS = LDGSTS
SWEEP_STRIDES = (4, 8, 12, 16, 20, 24, 28, 32, 36, 48, 64, 96, 128, 132, 256, 260, 512)
SWEEP_BASES = (0, 4, 16, 64, 96)


def sweep() -> list[dict]:
    """The global side alone: one warp copies to contiguous shared bytes (its store costs one
    wavefront per 128 bytes) from lane ``i`` at ``base + stride * i``, every ``.ca`` width, each
    stride of :data:`SWEEP_STRIDES` (a multiple of the width) from each base of :data:`SWEEP_BASES`."""
    out = []
    for name in ("cp4", "cp8", "cp16"):
        _, width, store = KINDS[name]
        for stride in SWEEP_STRIDES:
            for base in SWEEP_BASES:
                if stride % width or base % width:
                    continue
                out.append({"id": len(out), "probe": name, "instr": store, "family": "global_sweep",
                            "global_stride": stride, "global_base": base,
                            "byte_offsets": [width * i for i in range(32)], "mask": 0xFFFFFFFF})  # fmt: skip
    return out


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    with open(plan_path) as fh:
        patterns = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    mod = cp.RawModule(code=kernel_source(), options=(f"-arch=sm_{arch}",))
    src = cp.zeros(64 * 1024, dtype=cp.uint8)
    out = cp.empty(32, dtype=cp.uint32)
    kernels = {name: mod.get_function(f"k_{name}") for name in {**KINDS, **ZFILL_KINDS}}
    for p in patterns:
        offs = cp.asarray(np.asarray(p["byte_offsets"], dtype=np.int32))
        args = (
            offs,
            np.uint32(p["mask"]),
            src[p.get("global_base", 0) :],
            np.uint32(p["global_stride"]),
            out,
        )
        kernels[p["probe"]]((1,), (32,), args)
    cp.cuda.Device().synchronize()


def collect(plan_path: str, ncu_path: str, metrics: list[str], out_path: str) -> None:
    runs = match_launches(plan_path, ncu_path, lambda p: f"k_{p['probe']}", metrics)
    result = {"schema": 1, **environment(), "metrics": metrics, "cp_async_measurements": runs}
    with open(out_path, "w") as fh:
        json.dump(result, fh, separators=(",", ":"))
    print(f"{len(runs)} cp.async measurements -> {out_path}")


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else ""
    if cmd == "plan":
        n = int(argv[argv.index("--per-kind") + 1]) if "--per-kind" in argv else 100
        with open(argv[1], "w") as fh:
            json.dump(sweep() if "--sweep" in argv else plan(per_kind=n, zfill="--zfill" in argv), fh)
    elif cmd == "metrics":
        print(",".join(LDGSTS_METRICS))
    elif cmd == "run":
        run(argv[1])
    elif cmd == "collect":
        collect(argv[1], argv[2], LDGSTS_METRICS, argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
