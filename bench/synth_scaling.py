"""Speed of the §5.4 construction (``models/swizzle.optimal_swizzle``) from 9 to 20 tensor bits,
then of the search over vectors and instructions (``verifier/choice.search``: the construction
for each candidate, each access counted exactly), which ``synth`` runs.

Targets: the construction <= 5 ms per layout pair (median) up to 20 bits (issue: the paper's
algebra); the search <= 20 ms per pair up to 20 bits (issue: optimal means optimal), with the
exhaustive search (every candidate costed, as ``synth`` does for its runners-up) next to it.
Baseline in the same process: an F2 rank of as many vectors as the tensor has bits.
"""

from __future__ import annotations

import random
import statistics
import time

from bankproof.models import f2
from bankproof.models.layout import LinearLayout
from bankproof.models.swizzle import optimal_swizzle


def random_layout(rng: random.Random, rows: int, cols: int, warp_bits: int) -> LinearLayout:
    units = [[1 << i, 0] for i in range(rows)] + [[0, 1 << i] for i in range(cols)]
    rng.shuffle(units)
    lane, warp, reg = units[:5], units[5 : 5 + warp_bits], units[5 + warp_bits :]
    return LinearLayout.from_bases(
        {"register": reg, "lane": lane, "warp": warp, "block": []}, {"dim0": 1 << rows, "dim1": 1 << cols}
    )


def main() -> None:
    rng = random.Random(0)
    print("bits  pairs  median ms  max ms  baseline rank ms  ratio")
    worst = 0.0
    for bits in range(9, 21):
        times, base = [], []
        for _ in range(50):
            rows = rng.randint(1, bits - 1)
            warps = rng.randint(0, 3)
            a = random_layout(rng, rows, bits - rows, warps)
            b = random_layout(rng, rows, bits - rows, warps)
            elem = rng.choice([8, 16, 32, 64])
            t = time.perf_counter()
            optimal_swizzle(a, b, elem)
            times.append(time.perf_counter() - t)
            vecs = [rng.getrandbits(bits) for _ in range(bits)]
            t = time.perf_counter()
            f2.rank(vecs)
            base.append(time.perf_counter() - t)
        med, mx, bmed = statistics.median(times) * 1e3, max(times) * 1e3, statistics.median(base) * 1e3
        worst = max(worst, med)
        print(f"{bits:4d}  {len(times):5d}  {med:9.2f}  {mx:6.2f}  {bmed:16.3f}  {med / bmed:5.0f}x")
    print(f"worst median {worst:.2f} ms per pair (target <= 5 ms)")
    search_table(rng)


def search_table(rng: random.Random) -> None:
    from bankproof.verifier.api.problem import problem
    from bankproof.verifier.engine.choice import clear_caches, search

    print("search: bits  pairs  median ms  max ms  exhaustive median ms  baseline rank ms  ratio")
    worst = 0.0
    for bits in range(9, 21):
        times, full, base = [], [], []
        for _ in range(10):
            rows = rng.randint(1, bits - 1)
            warps = rng.randint(0, 3)
            a = random_layout(rng, rows, bits - rows, warps)
            b = random_layout(rng, rows, bits - rows, warps)
            dtype = rng.choice(["i8", "f16", "f32", "f64"])
            spec = problem(store=a.as_dict(), load=b.as_dict(), shape=[1 << rows, 1 << (bits - rows)],
                           dtype=dtype, require_memory=False)  # fmt: skip
            clear_caches()
            t = time.perf_counter()
            first = search(spec)[0]
            times.append(time.perf_counter() - t)
            clear_caches()
            t = time.perf_counter()
            assert search(spec, exhaustive=True)[0].key == first.key
            full.append(time.perf_counter() - t)
            vecs = [rng.getrandbits(bits) for _ in range(bits)]
            t = time.perf_counter()
            f2.rank(vecs)
            base.append(time.perf_counter() - t)
        med, mx = statistics.median(times) * 1e3, max(times) * 1e3
        fmed, bmed = statistics.median(full) * 1e3, statistics.median(base) * 1e3
        worst = max(worst, med)
        row = f"{bits:4d}  {len(times):5d}  {med:9.1f}  {mx:6.1f}  {fmed:20.1f}"
        print(f"        {row}  {bmed:16.3f}  {med / bmed:5.0f}x")
    print(f"search worst median {worst:.1f} ms per pair up to 20 bits (target <= 20 ms): "
          f"{'PASS' if worst <= 20 else 'FAIL'}")  # fmt: skip


if __name__ == "__main__":
    main()
