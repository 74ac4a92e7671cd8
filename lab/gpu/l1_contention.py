"""Does global traffic through L1 add to Nsight Compute's shared-memory wavefront counters? One CTA
(or a full grid) of 8 warps runs ``ITERS`` conflict-free 32-bit shared stores and loads (one
wavefront per warp instruction each, by construction), interleaved with: nothing; coalesced global
loads cached in L1 (``ld.global.ca``); the same bypassing L1 (``.cg``); scattered cached loads (one
128-byte line per lane); global stores; cp.async copies (``.cg``, 16 B) into another buffer. Each
(mode, grid) is launched ``REPEAT`` times, so ncu's run-to-run spread is measured beside the
excess over the exact count.

    python -m lab.gpu.l1_contention run
    ncu --csv --page raw --metrics $(python -m lab.gpu.l1_contention metrics) python -m lab.gpu.l1_contention run > c.csv
    python -m lab.gpu.l1_contention collect c.csv out.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks.measure import counters, parse_ncu_csv

METRICS = [
    *(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum" for op in ("ld", "st", "misc")),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_bypass.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
]  # fmt: skip
MODES = ["none", "ldg_ca", "ldg_cg", "ldg_ca_scatter", "stg", "cp_async", "cp_async_nowait", "bulk"]
ITERS, WARPS, REPEAT, GRIDS = 256, 8, 3, (1, 132)

SOURCE = r"""
extern "C" __global__ void contend_MODE(const float* __restrict__ g, float* out, float* sink) {
  __shared__ float s_[4 * 256];
  volatile float* s = s_;
  __shared__ __align__(128) float c[256 * 4];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
  __syncthreads();
  int t = threadIdx.x;
  float acc = 0.f;
  for (int i = 0; i < ITERS; ++i) {
    s[(i & 3) * 256 + t] = acc;
    acc += s[((i + 1) & 3) * 256 + t];
    size_t base = (size_t)blockIdx.x * ITERS * 256 + (size_t)i * 256;
    BODY
  }
  __syncthreads();
  out[blockIdx.x * 256 + t] = acc + c[t];
}
"""
CP_ASYNC = (  # one 16-byte .cg copy per lane into c
    'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(c + 4 * t)),'
    ' "l"(g + 4 * (base + t)) : "memory");'
)
WAIT_ALL = 'asm volatile("cp.async.wait_all;" ::: "memory");'
BODY = {
    "none": "",
    "ldg_ca": "acc += __ldca(g + base + t);",
    "ldg_cg": "acc += __ldcg(g + base + t);",
    "ldg_ca_scatter": "acc += __ldca(g + ((base + t) * 32) % (1u << 24));",
    "stg": "sink[base + t] = acc;",
    "cp_async": f"{CP_ASYNC} {WAIT_ALL}",
    "cp_async_nowait": f"{CP_ASYNC} if ((i & 7) == 7) {WAIT_ALL}",  # waits every 8th copy
    # one thread: a 4 KiB bulk copy (the TMA engine, no tensor map) per iteration, waited on by that thread
    "bulk": r"""if (t == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" :: "r"(bar) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];"
                   :: "r"((unsigned)__cvta_generic_to_shared(c)), "l"(g + 4 * base), "r"(bar) : "memory");
      asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
                   :: "r"(bar), "r"(i & 1) : "memory");
    }""",
}


def source() -> str:
    return "\n".join(
        SOURCE.replace("MODE", m).replace("BODY", BODY[m]).replace("ITERS", str(ITERS)) for m in MODES
    )


def exact(mode: str, grid: int) -> dict[str, int]:
    """The shared wavefronts the model gives: one per warp instruction (conflict-free 32-bit)."""
    warps = WARPS * grid
    return {"st": ITERS * warps, "ld": ITERS * warps + warps}


def run() -> None:
    import cupy as cp

    mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
    words = max(GRIDS) * ITERS * 256 * 4 + 4096
    g = cp.ones(words, dtype=cp.float32)
    out = cp.zeros(max(GRIDS) * 256, dtype=cp.float32)
    sink = cp.zeros(max(GRIDS) * ITERS * 256, dtype=cp.float32)
    for grid in GRIDS:
        for mode in MODES:
            for _ in range(REPEAT):
                mod.get_function(f"contend_{mode}")((grid,), (WARPS * 32,), (g, out, sink))
                cp.cuda.Device().synchronize()
                print("ran", mode, grid, flush=True)


def collect(csv_path: str, out_path: str) -> None:
    rows = [
        r
        for r in parse_ncu_csv(Path(csv_path).read_text())
        if r.get("Kernel Name", "").startswith("contend_")
    ]
    order = [(grid, mode) for grid in GRIDS for mode in MODES for _ in range(REPEAT)]
    runs = [{"mode": mode, "grid": grid, "exact": exact(mode, grid), **counters(r, METRICS)}
            for (grid, mode), r in zip(order, rows, strict=False)]  # fmt: skip
    Path(out_path).write_text(json.dumps({"kind": "l1_contention", "iters": ITERS, "warps": WARPS, "runs": runs},
                                         indent=1) + "\n")  # fmt: skip
    print(f"{len(runs)} launches -> {out_path}")


if __name__ == "__main__":
    from lab.gpu.probe_cli import main

    main("lab.gpu.l1_contention", sys.argv[1:], run, METRICS, collect)
