"""Answers that do not grow with the layout (issue: speed): the wavefront counts of a 2^24-element
layout (4096x4096 f16, a random invertible memory layout, Triton's blocked 128-bit read) from its
bases alone with ``verify_many``, within 50 ms and 100 MB; the baseline in the same run is
``verify``'s enumeration at 2^20 elements (it builds the element tables), whose answer
``verify_many`` must equal there.

    python bench/large_layouts.py
"""

from __future__ import annotations

import random
import time
import tracemalloc

from bankproof.models import f2
from bankproof.models.layout import LinearLayout

import bankproof

LOAD = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
MS, MB = 50.0, 100.0


def memory(side: int, seed: int) -> LinearLayout:
    """A random invertible ``offset -> (dim0, dim1)`` layout over a side x side tensor."""
    rng = random.Random(seed)
    n = 2 * (side.bit_length() - 1)
    while True:
        cols = [rng.randrange(1, 1 << n) for _ in range(n)]
        if f2.rank(cols) == n:
            break
    coords = LinearLayout((), (("dim0", side), ("dim1", side)))
    bases = [list(coords.unpack_dim0_lowest(c)) for c in cols]
    return LinearLayout.from_bases({"offset": bases}, {"dim0": side, "dim1": side})


def main() -> None:
    small = memory(1024, 1)
    bankproof.verify_many([small], load=LOAD, shape=(1024, 1024), dtype="f16")  # imports, first call
    t = time.perf_counter()
    want = bankproof.verify(small, load=LOAD, shape=(1024, 1024), dtype="f16", engines="enum").accesses[0]
    base = (time.perf_counter() - t) * 1e3
    got = bankproof.verify_many([small], load=LOAD, shape=(1024, 1024), dtype="f16").layouts[0][0]
    assert (got.wavefronts, got.ideal_wavefronts, got.instructions) == (
        want.wavefronts,
        want.ideal_wavefronts,
        want.instructions,
    )
    big = memory(4096, 2)
    tracemalloc.start()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        r = bankproof.verify_many([big], load=LOAD, shape=(4096, 4096), dtype="f16").layouts[0][0]
        times.append((time.perf_counter() - t) * 1e3)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    ms = sorted(times)[2]
    print(f"2^20 elements: verify (enumeration) {base:.0f} ms (baseline), verify_many equal")
    print(f"2^24 elements: verify_many {ms:.1f} ms, peak {peak:.1f} MB: {r.wavefronts} wavefronts in "
          f"{r.instructions} instructions ({r.instr})")  # fmt: skip
    print(f"2^24 answer {ms:.1f} ms (target <= {MS:g} ms): {'PASS' if ms <= MS else 'FAIL'}")
    print(f"2^24 peak {peak:.1f} MB (target <= {MB:g} MB): {'PASS' if peak <= MB else 'FAIL'}")


if __name__ == "__main__":
    main()
