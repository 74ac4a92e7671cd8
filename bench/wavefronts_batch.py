"""Batch rate of ``bankproof wavefronts`` (parse + model + groups), 20,000 random cases.

Target (issue: exact hardware model): >= 20,000 cases per second on the 2-core CI machine.
Baseline in the same process: json.loads + json.dumps of the same lines (pure I/O cost).
"""

from __future__ import annotations

import json
import random
import statistics
import time

from bankproof.models.hardware import all_instructions
from bankproof.verifier.api.wavefronts import run_lines

N = 20_000


def cases(seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    kinds = [i for i in all_instructions()]
    out = []
    for _ in range(N):
        ins = rng.choice(kinds)
        align = 16 if ins.is_matrix else ins.width
        offs = [rng.randrange(0, 4096 // align) * align for _ in range(32)]
        out.append(json.dumps({"instr": ins.short, "byte_offsets": offs}))
    return out


def timed(fn, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    lines = cases()
    base = timed(lambda: [json.dumps(json.loads(x)) for x in lines])
    ours = timed(lambda: run_lines(lines))
    print(
        f"wavefronts batch: {N} cases, median {ours * 1e3:.0f} ms -> {N / ours:,.0f} cases/s "
        f"(target >= 20,000); baseline json round trip {base * 1e3:.0f} ms; ratio {ours / base:.2f}x"
    )
    verdict = "PASS" if N / ours >= 20_000 else "FAIL"
    print(f"throughput {N / ours:,.0f} cases/s (target >= 20,000): {verdict}")


if __name__ == "__main__":
    main()
