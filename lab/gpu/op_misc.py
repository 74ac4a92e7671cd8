"""What Nsight Compute's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc`` counts: one CTA of
4 warps runs N of one instruction kind (warp shuffles, CTA barriers, warp syncs, votes, shared
atomics, mbarrier operations, fences), with an empty kernel as the baseline; the op_misc count per
kernel, with op_ld/op_st/op_atom beside it, says which kinds it is made of and how many wavefronts
each costs.

    python -m lab.gpu.op_misc run          # device: launches every probe once
    ncu --csv --page raw --metrics $(python -m lab.gpu.op_misc metrics) python -m lab.gpu.op_misc run > misc.csv
    python -m lab.gpu.op_misc collect misc.csv out.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks.measure import counters, parse_ncu_csv

METRICS = [f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("misc", "ld", "st", "atom")] + [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "smsp__inst_executed.sum"]  # fmt: skip
BODY = {
    "empty": "",
    "shfl": "v += __shfl_xor_sync(0xffffffff, v, (i & 15) + 1);",
    "bar": "__syncthreads(); v += i;",
    "syncwarp": "__syncwarp(); v += i;",
    "vote": "v += __ballot_sync(0xffffffff, (v + i) & 1);",
    "atom_shared": "atomicAdd(&s[threadIdx.x & 63], 1u);",
    "fence_cta": "__threadfence_block(); v += i;",
    "mbarrier_arrive": 'asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar_addr) : "memory");',
}
COUNTS = (8, 32)


def source() -> str:
    kernels = []
    for kind, body in BODY.items():
        for n in COUNTS if kind != "empty" else (1,):
            kernels.append(f"""
extern "C" __global__ void probe_{kind}_{n}(unsigned *out) {{
  __shared__ unsigned s[64];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&mbar);
  if (threadIdx.x < 64) s[threadIdx.x] = 0;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar_addr), "r"(1 << 19));
  __syncthreads();
  unsigned v = threadIdx.x;
  #pragma unroll
  for (int i = 0; i < {n}; ++i) {{ {body} }}
  out[blockIdx.x * blockDim.x + threadIdx.x] = v + s[threadIdx.x & 63];
}}""")
    return "\n".join(kernels)


def names() -> list[str]:
    return [f"probe_{k}_{n}" for k in BODY for n in (COUNTS if k != "empty" else (1,))]


def run() -> None:
    import cupy as cp

    mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
    out = cp.zeros(128, dtype=cp.uint32)
    for name in names():
        mod.get_function(name)((1,), (128,), (out,))
        cp.cuda.Device().synchronize()
        print("ran", name, flush=True)


def collect(csv_path: str, out_path: str) -> None:
    rows = [
        r for r in parse_ncu_csv(Path(csv_path).read_text()) if r.get("Kernel Name", "").startswith("probe_")
    ]
    runs = [{"kernel": r["Kernel Name"], **counters(r, METRICS)} for r in rows]
    Path(out_path).write_text(
        json.dumps({"kind": "op_misc_probes", "warps": 4, "runs": runs}, indent=1) + "\n"
    )
    print(f"{len(runs)} probes -> {out_path}")


if __name__ == "__main__":
    from lab.gpu.probe_cli import main

    main("lab.gpu.op_misc", sys.argv[1:], run, METRICS, collect)
