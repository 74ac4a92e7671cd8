"""Speed of the optimality proof over every linear layout and instruction choice
(``proofs/choices.prove_cheapest``) on pairs whose optimum is above the bytes / 128 bound (so the
solver, not the bound, decides), from 9 to 20 tensor bits.

Targets (issue: optimal means optimal): UNSAT within 1 s at 16 tensor bits and 10 s at 20.
Baseline in the same process: the search that found the cost being proved.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bankproof.proofs.choices import prove_cheapest  # noqa: E402
from bankproof.verifier.api.problem import problem  # noqa: E402
from bankproof.verifier.engine.choice import search, universal_bound  # noqa: E402
from synth_vs_z3 import random_pair  # noqa: E402


def hard_pairs(rng: random.Random, bits: int, want: int, tries: int = 400):
    """Random pairs of ``bits`` tensor bits whose searched optimum is above the bound."""
    out = []
    for _ in range(tries):
        a, b, shape = random_pair(rng, bits)
        dtype = rng.choice(["i8", "f16"])
        spec = problem(store=a.as_dict(), load=b.as_dict(), shape=shape, dtype=dtype, require_memory=False)
        t = time.perf_counter()
        best = search(spec)[0]
        searched = time.perf_counter() - t
        if best.total > universal_bound(spec):
            out.append((a, b, spec.elem_bits, best.total, searched))
        if len(out) == want:
            break
    return out


def lifted_pairs(rng: random.Random, bits: int, want: int, tries: int = 400):
    """Pairs of ``bits`` tensor bits built from random smaller pairs (9-14 bits, at most 8 fewer)
    by new tensor bits, each a register of one side and a warp of the other (alternating, at most
    32 warps), kept when the searched optimum stays above the bound: at 17-20 bits random pairs
    never are."""
    from bankproof.models.layout import LinearLayout

    out = []
    for _ in range(tries):
        small = rng.randint(max(9, bits - 8), min(14, bits - 1))
        a, b, shape = random_pair(rng, small)
        extra = bits - small
        dims = {"dim0": shape[0] << extra, "dim1": shape[1]}
        new = [[shape[0] << i, 0] for i in range(extra)]
        da, db = a.as_dict(), b.as_dict()
        da, db = {k: list(v) for k, v in da.items()}, {k: list(v) for k, v in db.items()}
        for i, bit in enumerate(new):  # a register of one side and a warp of the other, alternating
            one, other = (da, db) if i % 2 == 0 else (db, da)
            if len(other["warp"]) >= 5:
                one, other = other, one
            one["register"].append(bit)
            other["warp" if len(other["warp"]) < 5 else "register"].append(bit)
        lifted = [LinearLayout.from_bases(da, dims), LinearLayout.from_bases(db, dims)]
        dtype = rng.choice(["i8", "f16"])
        size = [dims["dim0"], dims["dim1"]]
        spec = problem(store=lifted[0].as_dict(), load=lifted[1].as_dict(), shape=size, dtype=dtype,
                       require_memory=False)  # fmt: skip
        t = time.perf_counter()
        best = search(spec)[0]
        searched = time.perf_counter() - t
        if best.total > universal_bound(spec):
            out.append((lifted[0], lifted[1], spec.elem_bits, best.total, searched))
        if len(out) == want:
            break
    return out


def main() -> None:
    rng = random.Random(0)
    print("bits  pairs  proof median s  max s  proved  search median ms  ratio")
    verdict = {}
    for bits in range(9, 21):
        times, search_ms, proved = [], [], 0
        pairs = hard_pairs(rng, bits, 5) or lifted_pairs(rng, bits, 5)
        for a, b, eb, cost, searched in pairs:
            out = prove_cheapest(a, b, eb, ("store", "load"), cost, "sm90", timeout_ms=30_000)
            times.append(out.seconds)
            search_ms.append(searched * 1e3)
            proved += out.status == "proved"
        if not times:
            print(f"{bits:4d}  no pair above the bound found")
            continue
        med, mx = statistics.median(times), max(times)
        sm = statistics.median(search_ms)
        row = f"{bits:4d}  {len(times):5d}  {med:14.2f}  {mx:5.2f}  {proved:6d}"
        print(f"{row}  {sm:16.1f}  {med * 1e3 / sm:5.0f}x")
        verdict[bits] = (mx, proved == len(times))
    for bits, limit in ((16, 1.0), (20, 10.0)):
        if bits in verdict:
            mx, ok = verdict[bits]
            print(f"{bits} bits: slowest proof {mx:.2f} s (target {limit:.0f} s): "
                  f"{'PASS' if mx <= limit and ok else 'FAIL'}")  # fmt: skip


if __name__ == "__main__":
    main()
