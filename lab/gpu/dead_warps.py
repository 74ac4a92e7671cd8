"""What a ``cp.async`` costs in warps whose every lane is predicated off (Triton guards a copy whose
layout repeats elements across warps with ``@p cp.async``, ``p`` true only in the warps that own
them). One CTA of 8 warps; each launch issues one copy per thread under a predicate on (warp mask,
lane mask) given as arguments (``arg``), or computed in the same PTX from ``%tid.x`` as Triton does
(``tid``: warp 0 only); copies of 4, 8, 16 bytes (``.ca``) and 16 bytes (``.cg``), with data and
zero-filled (source size 0). Live lanes write distinct consecutive shared words (conflict-free).

    python -m lab.gpu.dead_warps run
    ncu --csv --page raw --metrics $(python -m lab.gpu.dead_warps metrics) python -m lab.gpu.dead_warps run > c.csv
    python -m lab.gpu.dead_warps collect c.csv out.json

>>> len(plan()), plan()[1]
(56, {'kernel': 'dw_cp4_arg', 'warp_mask': 1, 'lane_mask': 4294967295})
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks.measure import counters, parse_ncu_csv
from bankproof.gpu_checks.metrics import LDGSTS

WARPS = 8
KINDS = {"cp4": ("ca", 4), "cp8": ("ca", 8), "cp16": ("ca", 16), "cp16cg": ("cg", 16)}
ALL = 0xFFFFFFFF
MASKS = [(0xFF, ALL), (0x01, ALL), (0x01, 0xFF), (0x00, ALL), (0xFF, 0xFF), (0x05, ALL)]  # (warps, lanes)
METRICS = [*LDGSTS, "smsp__inst_executed.sum"]

SOURCE = r"""
extern "C" __global__ void dw_NAME(const unsigned char* __restrict__ src, unsigned warp_mask,
                                   unsigned lane_mask, unsigned* __restrict__ out) {
  __shared__ __align__(1024) unsigned char smem[8 * 32 * 16];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned addr = (unsigned)__cvta_generic_to_shared(smem + (warp * 32 + lane) * WIDTH);
  const unsigned long long g = (unsigned long long)__cvta_generic_to_global(src + (warp * 32 + lane) * WIDTH);
  const unsigned on = ((warp_mask >> warp) & 1u) & ((lane_mask >> lane) & 1u);
  GUARD
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[threadIdx.x] = ((const unsigned*)smem)[threadIdx.x];
}
"""
ARG = ('asm volatile("{ .reg .pred p; setp.ne.u32 p, %2, 0; @p cp.async.MODE.shared.global [%0], [%1], '
       'WIDTHSIZE; }" :: "r"(addr), "l"(g), "r"(on) : "memory");')  # fmt: skip
TID = ('asm volatile("{ .reg .pred p; .reg .u32 w; mov.u32 w, %%tid.x; shr.u32 w, w, 5; setp.eq.u32 p, w, 0; '
       '@p cp.async.MODE.shared.global [%0], [%1], WIDTHSIZE; }" :: "r"(addr), "l"(g) : "memory");')  # fmt: skip


def kernels() -> list[tuple[str, str, int, bool, str]]:
    """(name, mode, width, zero-fill, guard) for every probe kernel."""
    return [(f"{k}{'z' if z else ''}_{guard}", mode, width, z, guard)
            for k, (mode, width) in KINDS.items() for z in (False, True) for guard in ("arg", "tid")]  # fmt: skip


def source() -> str:
    out = []
    for name, mode, width, zfill, guard in kernels():
        body = (ARG if guard == "arg" else TID).replace("MODE", mode).replace("SIZE", ", 0" if zfill else "")
        out.append(SOURCE.replace("NAME", name).replace("GUARD", body).replace("WIDTH", str(width)))
    return "\n".join(out)


def plan() -> list[dict]:
    """Launch order: each ``arg`` kernel under every (warp, lane) mask, each ``tid`` kernel once."""
    out = []
    for name, *_, guard in kernels():
        masks = MASKS if guard == "arg" else [(0x01, ALL)]
        out += [{"kernel": f"dw_{name}", "warp_mask": w, "lane_mask": lane} for w, lane in masks]
    return out


def run() -> None:
    import cupy as cp

    mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
    src = cp.ones(WARPS * 32 * 16, dtype=cp.uint8)
    out = cp.zeros(WARPS * 32, dtype=cp.uint32)
    for p in plan():
        mod.get_function(p["kernel"])((1,), (WARPS * 32,), (src, cp.uint32(p["warp_mask"]),
                                                            cp.uint32(p["lane_mask"]), out))  # fmt: skip
        cp.cuda.Device().synchronize()
    print("ran", len(plan()), flush=True)


def collect(csv_path: str, out_path: str, sass_path: str | None = None) -> None:
    rows = [
        r for r in parse_ncu_csv(Path(csv_path).read_text()) if r.get("Kernel Name", "").startswith("dw_")
    ]
    runs = [{**p, **counters(r, METRICS)} for p, r in zip(plan(), rows, strict=True)]
    rec = {"kind": "dead_warps", "warps": WARPS, "runs": runs}
    if sass_path:
        rec["sass"] = Path(sass_path).read_text()
    Path(out_path).write_text(json.dumps(rec, indent=1) + "\n")
    print(f"{len(runs)} launches -> {out_path}")


if __name__ == "__main__":
    from lab.gpu.probe_cli import main

    main("lab.gpu.dead_warps", sys.argv[1:], run, METRICS, collect, source=lambda: print(source()))
