"""Z3 proofs for AMD LDS accesses (``models/amd.py``): two lanes of one instruction conflict when
they are in one lane group (their lane indices differ by an element of lane 0's group, a
subspace), ask for the same bank block and not the same word. Addresses are F2-linear in the
instruction's free register bits, the two lane indices and the warp bits (linear memory).

>>> import numpy as np
>>> from bankproof.models import amd
>>> r = amd.rule("gfx942", "ds_write_b128")
>>> conflict_free(r, [], [16 * (1 << i) for i in range(6)], [], 16, 1000).status  # 16 B per lane, packed
'proved'
"""

from __future__ import annotations

import time

import z3
from bankproof.models import amd, f2
from bankproof.proofs.conflicts import Proof
from bankproof.proofs.encode import linear_term

ADDR = 32
LANE = 6


def _in_group(r: amd.Rule, d: z3.BitVecRef) -> z3.BoolRef:
    """``d`` (a lane-index difference) lies in lane 0's group: it is annihilated by every vector of
    the group's orthogonal complement."""
    group = amd.group_subspace(r)
    annihilators = [a for a in range(1, 1 << LANE) if all(bin(a & g).count("1") % 2 == 0 for g in group)]
    basis = f2.echelon(annihilators)
    terms = []
    for a in basis:
        bits = [z3.Extract(i, i, d) for i in range(LANE) if a >> i & 1]
        parity = bits[0]
        for b in bits[1:]:
            parity = parity ^ b
        terms.append(parity == 0)
    return z3.And(terms) if terms else z3.BoolVal(True)


def conflict_free(
    r: amd.Rule, reg_cols: list[int], lane_cols: list[int], warp_cols: list[int], width: int, timeout_ms: int
) -> Proof:
    """Whether no instruction has two conflicting lanes. ``*_cols``: the byte address of each free
    register bit, lane bit and warp bit (the access's address is their XOR); ``width`` bytes per
    lane. ``refuted`` carries the model's lanes and free bits."""
    t0 = time.perf_counter()
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    x, y = z3.BitVec("x", LANE), z3.BitVec("y", LANE)
    regs = z3.BitVec("reg", max(1, len(reg_cols)))
    warp = z3.BitVec("warp", max(1, len(warp_cols)))

    def address(lane: z3.BitVecRef) -> z3.BitVecRef:
        return (
            linear_term(reg_cols, regs, ADDR)
            ^ linear_term(lane_cols, lane, ADDR)
            ^ linear_term(warp_cols, warp, ADDR)
        )

    block = max(width, amd.BANK_BYTES)
    ax, ay = address(x), address(y)
    per_row = r.arch.banks * amd.BANK_BYTES // block
    s.add(x != y, _in_group(r, x ^ y))
    s.add(z3.URem(z3.UDiv(ax, block), per_row) == z3.URem(z3.UDiv(ay, block), per_row))
    s.add(z3.UDiv(ax, block) != z3.UDiv(ay, block))
    res = s.check()
    secs = time.perf_counter() - t0
    if res == z3.unsat:
        return Proof("proved", secs)
    if res == z3.sat:
        m = s.model()
        val = {"x": m.eval(x, True).as_long(), "y": m.eval(y, True).as_long(),
               "reg": m.eval(regs, True).as_long(),
               "warp": m.eval(warp, True).as_long()}  # fmt: skip
        return Proof("refuted", secs, model=val)
    return Proof("unknown", secs, reason=f"z3: {s.reason_unknown()} (time limit {timeout_ms} ms)")


def clique(
    r: amd.Rule,
    reg_cols: list[int],
    lane_cols: list[int],
    warp_cols: list[int],
    width: int,
    k: int,
    timeout_ms: int,
) -> str:
    """``sat`` when some instruction has ``k`` lanes of one group pairwise asking one bank block for
    different words, ``unsat`` when none has, ``unknown`` past the time limit."""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    lanes = [z3.BitVec(f"l{i}", LANE) for i in range(k)]
    regs = z3.BitVec("reg", max(1, len(reg_cols)))
    warp = z3.BitVec("warp", max(1, len(warp_cols)))
    base = linear_term(reg_cols, regs, ADDR) ^ linear_term(warp_cols, warp, ADDR)
    block = max(width, amd.BANK_BYTES)
    per_row = r.arch.banks * amd.BANK_BYTES // block
    words = [z3.UDiv(base ^ linear_term(lane_cols, lane, ADDR), block) for lane in lanes]
    for i in range(k):
        for j in range(i + 1, k):
            s.add(_in_group(r, lanes[i] ^ lanes[j]), words[i] != words[j])
            s.add(z3.URem(words[i], per_row) == z3.URem(words[j], per_row))
    return str(s.check())


def exact_count(
    r: amd.Rule,
    reg_cols: list[int],
    lane_cols: list[int],
    warp_cols: list[int],
    width: int,
    k: int,
    timeout_ms: int,
) -> Proof:
    """Z3's certificate that the costliest bank of a group serves exactly ``k`` words: a ``k``-lane
    clique exists and no ``k + 1`` one does (every group of a linear access costs the same)."""
    t0 = time.perf_counter()
    has_k = clique(r, reg_cols, lane_cols, warp_cols, width, k, timeout_ms) if k > 1 else "sat"
    more = clique(r, reg_cols, lane_cols, warp_cols, width, k + 1, timeout_ms)
    secs = time.perf_counter() - t0
    if has_k == "sat" and more == "unsat":
        return Proof("proved", secs)
    if "unknown" in (has_k, more):
        return Proof("unknown", secs, reason=f"z3: time limit {timeout_ms} ms")
    return Proof(
        "refuted", secs, reason=f"z3: {k} words per bank is {'too many' if has_k == 'unsat' else 'too few'}"
    )
