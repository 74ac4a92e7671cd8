"""Time ``cp.async`` with ``clock64`` where Nsight Compute cannot count: does a bypass copy
(``cp.async.cg``, LDGSTS.BYPASS) pay for bank conflicts the way a cached one (``.ca``), whose
wavefronts are counted, does?

    python -m lab.gpu.cp_async_timing run RESULTS.json      # on the GPU (CuPy)

One warp issues ``REPS`` copies of the same per-lane addresses (global side coalesced: lane i
reads ``width * i``), waits for all of them, and reports the cycles per copy; the shared-side
offsets are strided so that the store of the same width costs 1 to 32 wavefronts.

>>> [p["stride"] for p in patterns(16)], cases()[0]["mode"]
([16, 32, 64, 128], 'ca')
"""

from __future__ import annotations

import json
import sys

REPS = 2048
TRIALS = 7


def patterns(width: int) -> list[dict]:
    """Lane i writes ``stride * i``: from contiguous to every lane on one bank."""
    return [
        {"stride": s, "byte_offsets": [s * i for i in range(32)]}
        for s in (4, 8, 16, 32, 64, 128)
        if s >= width
    ]


def cases() -> list[dict]:
    out = []
    for mode, width in (("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16)):
        for p in patterns(width):
            out.append({"mode": mode, "width": width, **p})
    return out


def kernel_source() -> str:
    parts = []
    for mode, width in (("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16)):
        parts.append(
            f'extern "C" __global__ void k_{mode}{width}(const int* __restrict__ offs, '
            "const unsigned char* __restrict__ src, int reps, long long* __restrict__ out) {\n"
            "  __shared__ __align__(1024) unsigned char smem[8192];\n"
            "  const unsigned lane = threadIdx.x & 31;\n"
            "  unsigned addr; unsigned long long g;\n"
            '  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" '
            ': "=r"(addr) : "l"(smem + offs[lane]));\n'
            f'  asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(src + {width} * lane));\n'
            "  __syncwarp();\n  long long t0 = clock64();\n"
            "  for (int r = 0; r < reps; ++r) {\n"
            f'    asm volatile("cp.async.{mode}.shared.global [%0], [%1], {width};" :: "r"(addr), "l"(g) : "memory");\n'
            "  }\n"
            '  asm volatile("cp.async.wait_all;" ::: "memory");\n'
            "  long long t1 = clock64();\n"
            "  if (lane == 0) out[0] = t1 - t0;\n}\n"
        )
    return "\n".join(parts)


def run(out_path: str) -> None:
    import cupy as cp
    import numpy as np
    from bankproof.gpu_checks.measure import environment
    from bankproof.models.hardware import instruction, wavefront_counts

    arch = int(cp.cuda.Device().compute_capability)
    mod = cp.RawModule(code=kernel_source(), options=(f"-arch=sm_{arch}",))
    src = cp.arange(4096, dtype=cp.uint8)
    out = cp.zeros(1, dtype=cp.int64)
    results = []
    for c in cases():
        k = mod.get_function(f"k_{c['mode']}{c['width']}")
        offs = cp.asarray(np.asarray(c["byte_offsets"], dtype=np.int32))
        cycles = []
        for _ in range(TRIALS):
            k((1,), (32,), (offs, src, np.int32(REPS), out))
            cp.cuda.Device().synchronize()
            cycles.append(int(out.get()[0]))
        store = instruction({4: "st32", 8: "st64", 16: "st128"}[c["width"]])
        st = int(wavefront_counts(store, np.asarray(c["byte_offsets"])[None])[0])
        results.append({**c, "store_wavefronts": st, "cycles": cycles, "reps": REPS,
                        "cycles_per_copy": min(cycles) / REPS})  # fmt: skip
        print(f"{c['mode']}{c['width']:>3} stride {c['stride']:>3}: store {st:>2} wavefronts, "
              f"{min(cycles) / REPS:6.2f} cycles per copy")  # fmt: skip
    with open(out_path, "w") as fh:
        json.dump({"schema": 1, **environment(), "timings": results}, fh, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "run":
        raise SystemExit(__doc__)
    run(sys.argv[2])
