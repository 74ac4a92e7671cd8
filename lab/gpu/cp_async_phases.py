"""Which lanes of a 16-byte ``cp.async`` share a shared-memory phase, next to ``st.shared.v4``.

    python -m lab.gpu.cp_async_phases patterns PATTERNS.json
    python -m lab.gpu.cp_async_phases plan PLAN.json PATTERNS.json
    ncu --csv --page raw --metrics $(python -m lab.gpu.cp_async_phases metrics) \\
        python -m lab.gpu.cp_async_phases run PLAN.json > NCU.csv
    python -m lab.gpu.cp_async_phases collect PLAN.json NCU.csv RESULTS.json
    python -m lab.gpu.cp_async_phases time PATTERNS.json TIMES.json

Pair probes: only lanes ``a`` and ``j`` copy, to two different banks of one 128-byte row; one
wavefront when they share a phase, two when not. Full-warp patterns (``PATTERNS.json``: named
lists of 32 byte offsets, e.g. a FlashAttention-2 copy's first instruction) are counted and timed
with ``clock64``. Each probe runs as one warp, and as 132 blocks of 4 warps (every warp the same
pattern in its own 2 KB), since Nsight Compute showed no LDGSTS.BYPASS wavefronts for lone warps.

>>> src = kernel_source()
>>> "cp.async.cg.shared.global [%0], [%1], 16;" in src and "st.volatile.shared.v4.b32" in src
True
"""

from __future__ import annotations

import json
import sys

MODES = {"st128": "", "ca16": "ca", "cg16": "cg"}
GRIDS = ((1, 32), (132, 128))
REPS, TRIALS = 1024, 5
METRICS = [
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_access.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts_cache_bypass.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__sass_inst_executed_op_ldgsts.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
]


def _copy(mode: str) -> str:
    if not MODES[mode]:
        return (
            'if (on) asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %1, %1, %1};" :: "r"(addr), "r"(lane) '
            ': "memory");'
        )
    return f'if (on) asm volatile("cp.async.{MODES[mode]}.shared.global [%0], [%1], 16;" :: "r"(addr), "l"(g) : "memory");'


def kernel_source() -> str:
    """``k_<mode>``: one copy per warp; ``t_<mode>``: ``reps`` copies timed with ``clock64``."""
    parts = []
    for mode in MODES:
        head = (
            "  __shared__ __align__(1024) unsigned char smem[8192];\n"
            "  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
            "  const bool on = (mask >> lane) & 1u;\n"
            "  unsigned addr; unsigned long long g;\n"
            '  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" '
            ': "=r"(addr) : "l"(smem + 2048 * warp + offs[lane]));\n'
            '  asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(g) : "l"(src + 512 * (blockIdx.x * 4 + warp) + 16 * lane));\n'
        )
        parts.append(
            f'extern "C" __global__ void k_{mode}(const int* __restrict__ offs, unsigned mask, '
            "const unsigned char* __restrict__ src, unsigned* __restrict__ out) {\n"
            f"{head}  {_copy(mode)}\n"
            '  asm volatile("cp.async.wait_all;" ::: "memory");\n'
            "  __syncwarp();\n  out[threadIdx.x] = smem[2048 * warp + lane];\n}\n"
        )
        parts.append(
            f'extern "C" __global__ void t_{mode}(const int* __restrict__ offs, unsigned mask, '
            "const unsigned char* __restrict__ src, int reps, long long* __restrict__ out) {\n"
            f"{head}  __syncwarp();\n  long long t0 = clock64();\n"
            f"  for (int r = 0; r < reps; ++r) {{\n    {_copy(mode)}\n  }}\n"
            '  asm volatile("cp.async.wait_all;" ::: "memory");\n'
            "  long long t1 = clock64();\n  if (lane == 0) out[0] = t1 - t0;\n}\n"
        )
    return "\n".join(parts)


FA2_SMEM = "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (128,128))"  # FlashAttention-2's Q/K/V tile, f16


def fa2_offsets(threads_per_row: int, warp: int = 0) -> list[int]:
    """Byte offsets of one warp's first 16-byte copy into FA2's swizzled tile: thread t copies
    row ``t // threads_per_row``, columns ``8 * (t % threads_per_row)`` on (16 per row: head dim 128,
    ``kBlockKGmem = 128``; 8 per row: ``kBlockKGmem = 64``)."""
    from bankproof.models.notation.cute import parse_cute

    off = parse_cute(FA2_SMEM).coord_offsets()
    ts = range(32 * warp, 32 * warp + 32)
    byte = [2 * int(off[t // threads_per_row, 8 * (t % threads_per_row)]) for t in ts]
    # into one warp's 2 KB: the second 64-column block (16 KB on) moves to 1 KB on, same banks
    out = [b % 1024 + 1024 * (b // 16384) for b in byte]
    assert len(set(out)) == 32 and max(out) < 2048
    return out


def default_patterns(seed: int = 15, n_random: int = 12) -> dict[str, list[int]]:
    """Contiguous, FA2's copies (16 and 8 threads per row), and random rows: lanes k and k + 16
    write two different 16-byte slots of row k."""
    import random

    rng = random.Random(seed)
    out = {"contiguous": [16 * i for i in range(32)], "fa2 16 per row": fa2_offsets(16),
           "fa2 16 per row warp1": fa2_offsets(16, 1), "fa2 8 per row": fa2_offsets(8)}  # fmt: skip
    for x in (256, 512, 1024):  # the warp's two 16-lane halves x bytes apart, each contiguous
        out[f"halves {x} apart"] = [16 * i if i < 16 else x + 16 * (i - 16) for i in range(32)]
    for y in (256, 512):  # each 8-lane phase contiguous, phases y bytes apart
        out[f"phases {y} apart"] = [y * (i // 8) + 16 * (i % 8) for i in range(32)]
    for r in range(n_random):
        offs = [0] * 32
        for k in range(16):
            a, b = rng.sample(range(8), 2)
            offs[k], offs[k + 16] = 128 * k + 16 * a, 128 * k + 16 * b
        out[f"random {r}"] = offs
    return out


def pair_offsets(a: int, j: int) -> tuple[list[int], int]:
    """Lanes ``a`` and ``j`` copy to bytes 0 and 16 (two banks of one row); the rest are off."""
    offs = [0] * 32
    offs[j] = 16
    return offs, (1 << a) | (1 << j)


def plan(patterns: dict[str, list[int]]) -> list[dict]:
    """Pair probes for ``ca16``/``cg16`` on both grids, then every named full-warp pattern."""
    out = []
    for grid in GRIDS:
        for mode in MODES:
            if mode != "st128":
                for a in (0, 4, 8, 12):
                    for j in range(32):
                        if j != a:
                            offs, mask = pair_offsets(a, j)
                            out.append({"mode": mode, "grid": grid, "family": f"pair {a} {j}",
                                        "byte_offsets": offs, "mask": mask})  # fmt: skip
            for name, offs in patterns.items():
                out.append(
                    {"mode": mode, "grid": grid, "family": name, "byte_offsets": offs, "mask": 0xFFFFFFFF}
                )
    for i, p in enumerate(out):
        p["id"] = i
    return out


def run(plan_path: str) -> None:
    import cupy as cp
    import numpy as np

    with open(plan_path) as fh:
        probes = json.load(fh)
    mod = cp.RawModule(code=kernel_source(), options=("-arch=sm_90",))
    src = cp.arange(512 * 132 * 4, dtype=cp.uint8)
    out = cp.empty(128 * 132, dtype=cp.uint32)
    for p in probes:
        offs = cp.asarray(np.asarray(p["byte_offsets"], dtype=np.int32))
        blocks, threads = p["grid"]
        mod.get_function(f"k_{p['mode']}")((blocks,), (threads,), (offs, np.uint32(p["mask"]), src, out))
    cp.cuda.Device().synchronize()


def collect(plan_path: str, ncu_path: str, out_path: str) -> None:
    from bankproof.gpu_checks.measure import environment, match_launches

    runs = match_launches(plan_path, ncu_path, lambda p: f"k_{p['mode']}", METRICS)
    with open(out_path, "w") as fh:
        json.dump({"schema": 1, **environment(), "metrics": METRICS, "cp_async_phase_probes": runs}, fh)
    print(f"{len(runs)} cp.async phase probes -> {out_path}")


def time_patterns(patterns_path: str, out_path: str) -> None:
    import cupy as cp
    import numpy as np
    from bankproof.gpu_checks.measure import environment

    with open(patterns_path) as fh:
        patterns = json.load(fh)
    mod = cp.RawModule(code=kernel_source(), options=("-arch=sm_90",))
    src = cp.arange(512 * 132 * 4, dtype=cp.uint8)
    out = cp.zeros(1, dtype=cp.int64)
    rows = []
    for name, offs in patterns.items():
        o = cp.asarray(np.asarray(offs, dtype=np.int32))
        for mode in MODES:
            k = mod.get_function(f"t_{mode}")
            cycles = []
            for _ in range(TRIALS):
                k((1,), (32,), (o, np.uint32(0xFFFFFFFF), src, np.int32(REPS), out))
                cp.cuda.Device().synchronize()
                cycles.append(int(out.get()[0]))
            rows.append({"pattern": name, "mode": mode, "byte_offsets": offs, "cycles": cycles, "reps": REPS,
                         "cycles_per_copy": min(cycles) / REPS})  # fmt: skip
            print(f"{name:>24} {mode:>6}: {min(cycles) / REPS:7.2f} cycles per copy")
    with open(out_path, "w") as fh:
        json.dump({"schema": 1, **environment(), "timings": rows}, fh)


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else ""
    if cmd == "patterns":
        with open(argv[1], "w") as fh:
            json.dump(default_patterns(), fh)
    elif cmd == "plan":
        with open(argv[2]) as fh:
            pats = json.load(fh)
        with open(argv[1], "w") as fh:
            json.dump(plan(pats), fh)
    elif cmd == "metrics":
        print(",".join(METRICS))
    elif cmd == "run":
        run(argv[1])
    elif cmd == "collect":
        collect(argv[1], argv[2], argv[3])
    elif cmd == "time":
        time_patterns(argv[1], argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
