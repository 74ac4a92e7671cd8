"""The search's optimum against Z3 over every invertible linear layout and instruction choice,
on random layout pairs (8/16/32/64-bit, 1-8 warps, both orders): for each pair, Z3 proves that
nothing costs less than the search's best (UNSAT) and finds a pair one wavefront above it (SAT),
whose cost by enumeration equals what the encoding says. Prints the counts.

    python bench/synth_vs_z3.py [pairs] [seed]
"""

from __future__ import annotations

import random
import sys
import time

from bankproof.models.layout import LinearLayout
from bankproof.proofs.choices import prove_cheapest
from bankproof.verifier.api.problem import problem
from bankproof.verifier.engine.choice import search, universal_bound
from bankproof.verifier.engine.costs import enumerated_cost


def random_pair(rng: random.Random, bits: int | None = None) -> tuple[LinearLayout, LinearLayout, list[int]]:
    """Two distributed layouts onto one tensor (every tensor bit a register, lane or warp once)."""
    warps = rng.randint(0, 3)
    bits = bits if bits is not None else rng.randint(5 + warps, 12)
    rows = rng.randint(1, bits - 1)
    shape = [1 << rows, 1 << (bits - rows)]

    def one() -> LinearLayout:
        units = [[1 << i, 0] for i in range(rows)] + [[0, 1 << i] for i in range(bits - rows)]
        rng.shuffle(units)
        return LinearLayout.from_bases(
            {"lane": units[:5], "warp": units[5 : 5 + warps], "register": units[5 + warps :], "block": []},
            {"dim0": shape[0], "dim1": shape[1]},
        )

    return one(), one(), shape


def random_problem(rng: random.Random, dtype: str, arch: str):
    """(writer, reader, spec) of a random pair, in either order (which side writes)."""
    a, b, shape = random_pair(rng)
    if rng.random() < 0.5:
        a, b = b, a
    spec = problem(
        store=a.as_dict(), load=b.as_dict(), shape=shape, dtype=dtype, arch=arch, require_memory=False
    )
    return a, b, spec


def check(rng: random.Random, dtype: str, arch: str = "sm90") -> dict:
    a, b, spec = random_problem(rng, dtype, arch)
    best = search(spec)[0]
    bits = spec.elem_bits
    proof = prove_cheapest(a, b, bits, ("store", "load"), best.total, arch)
    above = prove_cheapest(a, b, bits, ("store", "load"), best.total + 1, arch)
    enumerated = None
    if above.layout is not None:
        sides = [(a, "store", above.instructions[0]), (b, "load", above.instructions[1])]
        enumerated = enumerated_cost(sides, above.layout, bits)
    return {"best": best.total, "bound": universal_bound(spec), "proof": proof.status, "above": above.status,
            "agree": enumerated is not None and enumerated == above.modeled <= best.total,
            "seconds": proof.seconds + above.seconds}  # fmt: skip


def check_optimum(rng: random.Random, dtype: str, arch: str = "sm90") -> dict:
    """The search's best on a random pair, its layout enumerated (the exact count equals the
    search's), and Z3's verdict that nothing costs less (``proved``: search = Z3's optimum)."""
    a, b, spec = random_problem(rng, dtype, arch)
    best = search(spec)[0]
    bits = spec.elem_bits
    sides = [(a, "store", best.instructions[0]), (b, "load", best.instructions[1])]
    enumerated = enumerated_cost(sides, best.construction.layout, bits)
    proof = prove_cheapest(a, b, bits, ("store", "load"), best.total, arch)
    return {"best": best.total, "bound": universal_bound(spec), "enumerated": enumerated,
            "proof": proof.status, "z3_found": proof.modeled, "instructions": best.instructions}  # fmt: skip


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    counts: dict[str, int] = {}
    worst, t0 = 0.0, time.perf_counter()
    for i in range(n):
        dtype = ("i8", "f16", "f32", "f64")[i % 4]
        r = check(rng, dtype)
        key = f"{r['proof']}/{r['above']}/{'agree' if r['agree'] else 'DISAGREE'}"
        key += "/above bound" if r["best"] > r["bound"] else "/bound met"
        counts[key] = counts.get(key, 0) + 1
        worst = max(worst, r["seconds"])
    for key, c in sorted(counts.items()):
        print(f"{c:5d}  {key}")
    ok = sum(c for k, c in counts.items() if k.startswith("proved/refuted/agree"))
    print(f"{ok} of {n} pairs: search optimum = Z3 optimum (UNSAT below, SAT at it, enumeration = encoding); "
          f"slowest pair {worst:.2f} s; {time.perf_counter() - t0:.0f} s in all")  # fmt: skip
    print(f"every pair agrees ({ok} of {n}): {'PASS' if ok == n else 'FAIL'}")


if __name__ == "__main__":
    main()
