"""Transpose tiles through shared memory on the GPU: plain, classic XOR and synthesized swizzles.

Run on a GPU machine (CuPy): ``python -m lab.gpu.gpu_transpose OUT.json [--ncu]``. Each block
writes a tile row-wise (threads along columns) and reads it column-wise (threads along rows),
``ITER`` times, with every address in registers; time per tile comes from CUDA events (median of
many runs), bandwidth is tile bytes moved in and out of shared memory per second against the
physical peak (128 bytes per clock per SM). With ``--ncu`` each configuration also runs once
(one iteration) so Nsight Compute can count its wavefronts; ``--join`` matches those counts to
the predictions by kernel name:

    ncu --csv --page raw --metrics $(python -m bankproof.gpu_checks.layout_runs metrics) \\
        python -m lab.gpu.gpu_transpose ONE.json --ncu > NCU.csv
    python -m lab.gpu.gpu_transpose --join ONE.json NCU.csv ONE_TILE.json
    python -m lab.gpu.gpu_transpose RESULTS.json --one-tile ONE_TILE.json
"""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np
from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.notation import parse_layout
from bankproof.models.swizzle import optimal_swizzle

ITER = 64
TILES = [((16, 32), 32, 1), ((64, 64), 32, 4), ((64, 64), 16, 4), ((128, 128), 16, 4)]


def layouts(shape, bits, warps):
    """Row-wise writer (threads along columns) and column-wise reader (threads along rows)."""
    rows, cols = shape
    v = 1 if shape == (16, 32) else max(1, 128 // bits // (1 if cols >= 32 * 128 // bits else 2))
    v = min(v, 128 // bits, cols)
    tpw_c = min(32, cols // v)
    store = parse_layout(
        f"#ttg.blocked<{{sizePerThread = [1, {v}], threadsPerWarp = [{32 // tpw_c}, {tpw_c}], "
        f"warpsPerCTA = [{warps}, 1], order = [1, 0]}}>",
        list(shape),
    ).layout
    if shape == (16, 32):
        load = parse_layout(
            '{"register": [[0, 2], [0, 4], [0, 8], [0, 16]], '
            '"lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}',
            list(shape),
        ).layout
    else:
        tpw_r = min(32, rows)
        load = parse_layout(
            f"#ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [{tpw_r}, {32 // tpw_r}], "
            f"warpsPerCTA = [1, {warps}], order = [0, 1]}}>",
            list(shape),
        ).layout
    return store, load


def memories(shape, store, load, bits):
    rows, cols = shape
    plain = parse_layout(f"{cols}*m + n", list(shape)).layout
    mod = min(rows, cols)
    xor = parse_layout(f"{cols}*m + (n ^ (m % {mod}))", list(shape)).layout
    synth = optimal_swizzle(store, load, bits).layout
    return {"plain": plain, "classic_xor": xor, "synthesized": synth}


SRC = r"""
extern "C" __global__ void k_bench_{name}(const unsigned* __restrict__ st_addr, const unsigned* __restrict__ ld_addr,
                                         unsigned* __restrict__ sink, int iters) {{
  __shared__ __align__(1024) unsigned char smem[{smem}];
  unsigned base;
  asm volatile("{{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }}" : "=r"(base) : "l"(smem));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned sa[{nst}], la[{nld}];
  for (int i = 0; i < {nst}; ++i) sa[i] = base + st_addr[(warp * {nst} + i) * 32 + lane];
  for (int i = 0; i < {nld}; ++i) la[i] = base + ld_addr[(warp * {nld} + i) * 32 + lane];
  unsigned acc = 0;
  for (int it = 0; it < iters; ++it) {{
    #pragma unroll
    for (int i = 0; i < {nst}; ++i) {{ {store} }}
    __syncthreads();
    #pragma unroll
    for (int i = 0; i < {nld}; ++i) {{ {load} }}
    __syncthreads();
  }}
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}}
"""

STORE = {
    2: 'unsigned short h = (unsigned short)(lane + it); asm volatile("st.shared.u16 [%0], %1;" :: "r"(sa[i]), "h"(h) : "memory");',
    4: 'asm volatile("st.shared.b32 [%0], %1;" :: "r"(sa[i]), "r"(lane + it) : "memory");',
    8: 'asm volatile("st.shared.v2.b32 [%0], {%1, %2};" :: "r"(sa[i]), "r"(lane), "r"(it) : "memory");',
    16: 'asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(sa[i]), "r"(lane), "r"(it), "r"(i), "r"(warp) : "memory");',
}
LOAD = {
    2: 'unsigned short h; asm volatile("ld.shared.u16 %0, [%1];" : "=h"(h) : "r"(la[i]) : "memory"); acc += h;',
    4: 'unsigned r; asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r) : "r"(la[i]) : "memory"); acc += r;',
    8: 'unsigned r0, r1; asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(la[i]) : "memory"); acc += r0 ^ r1;',
    16: 'unsigned r0, r1, r2, r3; asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(la[i]) : "memory"); acc += r0 ^ r1 ^ r2 ^ r3;',
}


def kernel_of(row: dict) -> str:
    """The benchmark kernel of one result row (``k_bench_16x32_32_plain``)."""
    return f"k_bench_{row['tile']}_{row['dtype'][1:]}_{row['swizzle']}"


def join(rows_path: str, ncu_path: str, out_path: str) -> None:
    """Measured wavefronts of each one-tile launch next to its prediction, matched by kernel name."""
    from bankproof.gpu_checks.measure import number_value, parse_ncu_csv
    from bankproof.gpu_checks.metrics import WAVEFRONTS

    with open(rows_path) as fh:
        rows = json.load(fh)["rows"]
    with open(ncu_path) as fh:
        measured = {
            r["Kernel Name"]: {
                "store": number_value(r[WAVEFRONTS["st"]]),
                "load": number_value(r[WAVEFRONTS["ld"]]),
            }
            for r in parse_ncu_csv(fh.read())
            if r.get("Kernel Name", "").startswith("k_bench_")
        }
    out = [
        {
            "kernel": kernel_of(r),
            "predicted": r["predicted_wavefronts"],
            "measured": measured[kernel_of(r)],
            "match": measured[kernel_of(r)] == r["predicted_wavefronts"],
        }
        for r in rows
    ]
    with open(out_path, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"{sum(x['match'] for x in out)} of {len(out)} one-tile kernels measure as predicted")


def main(argv: list[str]) -> None:
    if argv[0] == "--join":
        return join(*argv[1:4])
    import datetime

    import cupy as cp
    from bankproof.gpu_checks.measure import environment

    out_path, with_ncu = argv[0], "--ncu" in argv
    one_tile = None
    if "--one-tile" in argv:  # the --join output, recorded with the timings
        with open(argv[argv.index("--one-tile") + 1]) as fh:
            one_tile = json.load(fh)
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    clock_hz = props["clockRate"] * 1e3
    peak = 128 * sms * clock_hz
    arch = int(dev.compute_capability)
    rows_out = []
    for shape, bits, warps in TILES:
        store, load = layouts(shape, bits, warps)
        for swz, mem in memories(shape, store, load, bits).items():
            st = build_access(store, mem, bits, "store")
            ld = build_access(load, mem, bits, "load")
            st_pred = int(evaluate(st.instr, st.addresses)[0].sum())
            ld_pred = int(evaluate(ld.instr, ld.addresses)[0].sum())
            nst, nld = len(st.addresses) // warps, len(ld.addresses) // warps
            name = f"{shape[0]}x{shape[1]}_{bits}_{swz}"
            src = SRC.format(
                name=name,
                smem=shape[0] * shape[1] * bits // 8 + 16,
                nst=nst,
                nld=nld,
                store=STORE[st.instr.width],
                load=LOAD[ld.instr.width],
            )
            fn = cp.RawModule(code=src, options=(f"-arch=sm_{arch}",)).get_function(f"k_bench_{name}")
            # C order: the kernel indexes (instruction * 32 + lane); astype would keep a view's order
            sa = cp.asarray(np.ascontiguousarray(st.addresses, dtype=np.uint32))
            la = cp.asarray(np.ascontiguousarray(ld.addresses, dtype=np.uint32))
            blocks = sms * 16
            sink = cp.zeros(blocks * 32 * warps, dtype=cp.uint32)
            if with_ncu:  # one tile, one iteration: Nsight Compute counts its wavefronts
                fn((1,), (32 * warps,), (sa, la, sink, np.int32(1)))
                cp.cuda.Device().synchronize()
                rows_out.append(
                    {
                        "tile": f"{shape[0]}x{shape[1]}",
                        "dtype": f"f{bits}",
                        "swizzle": swz,
                        "predicted_wavefronts": {"store": st_pred, "load": ld_pred},
                    }
                )
                continue
            fn((blocks,), (32 * warps,), (sa, la, sink, np.int32(ITER)))
            times = []
            for _ in range(30):
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                fn((blocks,), (32 * warps,), (sa, la, sink, np.int32(ITER)))
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3)
            t = statistics.median(times)
            tiles = blocks * ITER
            tile_bytes = shape[0] * shape[1] * bits // 8
            rows_out.append(
                {
                    "tile": f"{shape[0]}x{shape[1]}",
                    "dtype": f"f{bits}",
                    "swizzle": swz,
                    "store_instr": st.instr.short,
                    "load_instr": ld.instr.short,
                    "predicted_wavefronts": {"store": st_pred, "load": ld_pred},
                    "ns_per_tile": t / tiles * 1e9,
                    "bandwidth_GBps": 2 * tile_bytes * tiles / t / 1e9,
                    "fraction_of_peak": 2 * tile_bytes * tiles / t / peak,
                }
            )
            cp.cuda.Device().synchronize()
    for shape, bits, _ in TILES if not with_ncu else []:
        by = {
            r["swizzle"]: r
            for r in rows_out
            if r["tile"] == f"{shape[0]}x{shape[1]}" and r["dtype"] == f"f{bits}"
        }
        by["synthesized"]["speedup_vs_classic_xor"] = (
            by["classic_xor"]["ns_per_tile"] / by["synthesized"]["ns_per_tile"]
        )
    with open(out_path, "w") as fh:
        json.dump(
            {
                "schema": 1,
                "kind": "transpose_bench",
                **environment(),
                "date": datetime.date.today().isoformat(),
                "ncu_one_tile": one_tile,
                "peak_GBps": peak / 1e9,
                "sms": sms,
                "clock_MHz": clock_hz / 1e6,
                "iterations": ITER,
                "rows": rows_out,
            },
            fh,
            indent=1,
        )
    for r in rows_out if not with_ncu else []:
        print(
            f"{r['tile']:>8} {r['dtype']} {r['swizzle']:<12} {r['ns_per_tile']:8.1f} ns/tile "
            f"{r['bandwidth_GBps']:8.0f} GB/s ({100 * r['fraction_of_peak']:4.1f}% of peak) "
            f"predicted st/ld {r['predicted_wavefronts']['store']}/{r['predicted_wavefronts']['load']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
