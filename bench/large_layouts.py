"""Answers that do not grow with the layout (issue: speed). Every line measures its baseline in the
same run.

1. ``verify`` with the algebra and Z3 engines on layouts of 2^24 and 2^30 elements given as bases
   (f16, Triton's blocked 128-bit read; a row-major layout with 2-way conflicts, so a counterexample
   is built, and its swizzled form, proved): within 50 ms and 100 MB each (the instructions are
   never listed: instruction 0 stands for all, see ``models/tally.py``).
2. ``verify`` with the enumeration engine at 2^22 elements (a random invertible layout, f32 and
   f16): every instruction counted from the bases (``models/access_linear.py``) against the same
   count from element tables (``target.build`` + ``target.count``, the path padded layouts take):
   at least 10x faster, the same totals.
3. ``verify_many`` at 2^24 from bases within 50 ms and 100 MB.
4. ``synth``'s optimality proof at 24 tensor bits (a pair whose optimum is above every access's
   phase count, so Z3 answers one UNSAT query per cheaper pair of instruction choices) within 5 s,
   next to the same proof at 12 bits.

    python bench/large_layouts.py
"""

from __future__ import annotations

import random
import time
import tracemalloc

from bankproof.models import access, f2, target
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import parse_layout

import bankproof

LOAD = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
MS, MB, ENUM_X, SYNTH_S = 50.0, 100.0, 10.0, 5.0


def random_memory(side: int, seed: int) -> LinearLayout:
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


def row_major(side_bits: int, swizzled: bool) -> LinearLayout:
    """Row-major f16 (rows 2^side_bits elements apart), or with 16-byte chunks XOR-swizzled by row."""
    n = side_bits
    cols = [1 << (n + k) for k in range(n)] + [1 << j for j in range(n)]
    if swizzled:
        for j in range(3):
            cols[n + j] |= 1 << (n + 5 + j)
    c = LinearLayout((), (("dim0", 1 << n), ("dim1", 1 << n)))
    return LinearLayout.from_bases(
        {"offset": [list(c.unpack_dim0_lowest(x)) for x in cols]}, dict(c.out_dims)
    )


def timed(fn, runs: int = 5):
    """(median ms, peak MB, last result) of ``runs`` calls after one warm call."""
    fn()
    tracemalloc.start()
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1e3)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return sorted(times)[len(times) // 2], peak, out


def from_bases(verdicts: list) -> None:
    for side_bits in (12, 15):
        side = 1 << side_bits
        for swizzled in (False, True):
            mem = row_major(side_bits, swizzled)

            def call(mem=mem, side=side):
                return bankproof.verify(
                    mem, load=LOAD, shape=(side, side), dtype="f16", engines=["algebra", "z3"]
                )

            ms, peak, r = timed(call)
            a = r.accesses[0]
            cx = a.conflict
            extra = f", counterexample lanes {cx.lanes} on bank {cx.bank}" if cx else ""
            what = f"2^{2 * side_bits} {'swizzled' if swizzled else 'row-major'}"
            answer = f"{r.verdict}, {a.wavefronts} wavefronts in {a.instructions} {a.instr}{extra}"
            print(f"{what}: algebra + Z3 {ms:.1f} ms, peak {peak:.1f} MB: {answer}")
            target_text = f"(targets <= {MS:g} ms, {MB:g} MB)"
            verdicts.append((f"{what} {ms:.1f} ms, {peak:.1f} MB {target_text}", ms <= MS and peak <= MB))


def enumeration(verdicts: list) -> None:
    side = 2048
    mem = random_memory(side, 3)
    dist = parse_layout(LOAD, (side, side)).layout
    for dtype, bits in (("f32", 32), ("f16", 16)):

        def tables(bits=bits):
            access.clear_caches()
            target.clear_caches()
            return target.count("sm90", target.build("sm90", dist, mem, bits, "load"))

        def bases(dtype=dtype):
            return bankproof.verify(mem, load=LOAD, shape=(side, side), dtype=dtype, engines="enum").accesses[
                0
            ]

        base_ms, _, c = timed(tables, 3)
        ms, _, a = timed(bases, 3)
        assert (a.wavefronts, a.ideal) == (int(c.counts.sum()), int(c.ideals.sum()))
        ratio = base_ms / ms
        counted = f"{a.wavefronts} wavefronts in {a.instructions} {a.instr}, equal"
        print(f"2^22 {dtype}: enumeration from bases {ms:.0f} ms, from tables {base_ms:.0f} ms (baseline), "
              f"{ratio:.1f}x; {counted}")  # fmt: skip
        verdicts.append(
            (f"enumeration at 2^22 {dtype} {ratio:.1f}x the tables (target >= {ENUM_X:g}x)", ratio >= ENUM_X)
        )


def many(verdicts: list) -> None:
    big = random_memory(4096, 2)
    ms, peak, r = timed(lambda: bankproof.verify_many([big], load=LOAD, shape=(4096, 4096), dtype="f16"))
    got = r.layouts[0][0]
    print(f"2^24 elements: verify_many {ms:.1f} ms, peak {peak:.1f} MB: {got.wavefronts} wavefronts in "
          f"{got.instructions} instructions ({got.instr})")  # fmt: skip
    verdicts.append((f"verify_many 2^24 {ms:.1f} ms, {peak:.1f} MB (targets <= {MS:g} ms, {MB:g} MB)",
                     ms <= MS and peak <= MB))  # fmt: skip


def hard_pair(extra_warp_bits: int) -> tuple[dict, dict, list[int]]:
    """An 8x128 f16 pair (two warps' bits each) whose optimum costs more than its phases, so Z3
    rules out 25 cheaper instruction pairs, grown by ``extra_warp_bits`` warp bits along dim0."""
    a = {"register": [[2, 0], [4, 0], [0, 8]], "lane": [[0, 64], [0, 32], [1, 0], [0, 1], [0, 4]],
         "warp": [[0, 2], [0, 16]]}  # fmt: skip
    b = {"register": [[0, 1], [0, 64], [1, 0]], "lane": [[0, 32], [4, 0], [0, 16], [0, 2], [0, 4]],
         "warp": [[2, 0], [0, 8]]}  # fmt: skip
    for d in (a, b):
        d["warp"] = d["warp"] + [[8 << k, 0] for k in range(extra_warp_bits)]
    return a, b, [8 << extra_warp_bits, 128]


def synth(verdicts: list) -> None:
    for extra in (0, 14):
        a, b, shape = hard_pair(extra)
        t = time.perf_counter()
        r = bankproof.synth(store=a, load=b, shape=shape, dtype="f16")
        s = time.perf_counter() - t
        o = r.synth.optimality
        bits = sum(x.bit_length() - 1 for x in shape)
        proof = f"optimality proof {o.proof.status} in {o.proof.seconds:.2f} s (cost {o.cost})"
        print(f"synth at {bits} tensor bits: {s:.2f} s; {proof}")
    ok = s <= SYNTH_S and o.proof.status == "proved"
    verdicts.append(
        (f"synth at 24 tensor bits {s:.2f} s, proof {o.proof.status} (target <= {SYNTH_S:g} s)", ok)
    )


def main() -> None:
    verdicts: list = []
    from_bases(verdicts)
    enumeration(verdicts)
    many(verdicts)
    synth(verdicts)
    for what, ok in verdicts:
        print(f"{what}: {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
