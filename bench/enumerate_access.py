"""Enumeration engine speed and memory.

Targets (issue: exact hardware model): every instruction of a 128x128 fp16 load with 8 warps
enumerated in <= 20 ms (median); a 20-bit layout enumerated within 500 MB peak memory.
Baseline in the same process: numpy's sort of as many int64 keys as the load has lane-words.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

import numpy as np
from bankproof.models.access import build_access, clear_caches
from bankproof.models.hardware import evaluate
from bankproof.models.notation import parse_layout

SWZ = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"
)


def enumerate_all(dist, mem, bits: int) -> int:
    a = build_access(dist, mem, bits, "load")
    counts, _, _ = evaluate(a.instr, a.addresses)
    return int(counts.sum())


def median_ms(fn, reps: int = 21) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    dist = parse_layout(BLOCKED, [128, 128]).layout
    mem = parse_layout(SWZ, [128, 128]).layout
    total = enumerate_all(dist, mem, 16)
    ms = median_ms(lambda: (clear_caches(), enumerate_all(dist, mem, 16)))  # cold, as a new process
    keys = np.random.default_rng(0).integers(0, 1 << 40, 64 * 32 * 4)
    base = median_ms(lambda: np.sort(keys))
    print(
        f"128x128 fp16 load, 8 warps: {total} wavefronts, median {ms:.1f} ms (target <= 20 ms); "
        f"baseline sort {base:.2f} ms; ratio {ms / base:.1f}x"
    )

    dist20 = parse_layout(BLOCKED, [1024, 1024]).layout
    mem20 = parse_layout(SWZ, [1024, 1024]).layout
    tracemalloc.start()
    t = time.perf_counter()
    total20 = enumerate_all(dist20, mem20, 16)
    secs = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"20-bit layout (1024x1024 fp16, 8 warps): {total20} wavefronts in {secs:.2f} s, "
        f"peak {peak / 2**20:.0f} MB (target <= 500 MB)"
    )
    print(f"128x128 load {ms:.1f} ms (target <= 20 ms): {'PASS' if ms <= 20 else 'FAIL'}")
    verdict = "PASS" if peak <= 500 * 2**20 else "FAIL"
    print(f"20-bit layout peak {peak / 2**20:.0f} MB (target <= 500 MB): {verdict}")


if __name__ == "__main__":
    main()
