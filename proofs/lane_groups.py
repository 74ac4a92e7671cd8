"""Z3 proofs for lane-group accesses (``models/lds.py``): two lanes of one instruction conflict when
they are in one lane group (their lane indices differ by an element of lane 0's group, a
subspace), ask for the same bank block and not the same word. Addresses are F2-linear in the
instruction's free register bits, the two lane indices and the warp bits (linear memory).

>>> from bankproof.models import target
>>> r = target.rule("gfx942", "ds_write_b128")
>>> conflict_free(r, [], [16 * (1 << i) for i in range(6)], [], 16, 1000).status  # 16 B per lane, packed
'proved'
"""

from __future__ import annotations

import time

import z3
from bankproof.models import f2, lds
from bankproof.proofs.conflicts import Proof
from bankproof.proofs.encode import linear_term

ADDR = 32


def _annihilators(r: lds.Rule) -> list[int]:
    """A basis of the lane-index vectors orthogonal to lane 0's group: ``d`` lies in the group iff
    every one of them has even overlap with it."""
    group = lds.group_subspace(r)
    return f2.echelon(a for a in range(1, r.warp) if all(bin(a & g).count("1") % 2 == 0 for g in group))


def _in_group(annihilators: list[int], d: z3.BitVecRef) -> z3.BoolRef:
    """``d`` (a lane-index difference) lies in the group the ``annihilators`` describe."""
    terms = []
    for a in annihilators:
        bits = [z3.Extract(i, i, d) for i in range(d.size()) if a >> i & 1]
        parity = bits[0]
        for b in bits[1:]:
            parity = parity ^ b
        terms.append(parity == 0)
    return z3.And(terms) if terms else z3.BoolVal(True)


def _cliques(
    r: lds.Rule,
    reg_cols: list[int],
    lane_cols: list[int],
    warp_cols: list[int],
    width: int,
    k: int,
    timeout_ms: int,
) -> tuple[z3.Solver, list[z3.BitVecRef], z3.BitVecRef, z3.BitVecRef]:
    """A solver whose models are ``k`` lanes of one instruction (shared free register and warp
    bits) in one lane group, pairwise asking one bank block for different words. ``*_cols``: the
    byte address of each free register bit, lane bit and warp bit (an address is their XOR)."""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    lanes = [z3.BitVec(f"l{i}", r.warp.bit_length() - 1) for i in range(k)]
    regs = z3.BitVec("reg", max(1, len(reg_cols)))
    warp = z3.BitVec("warp", max(1, len(warp_cols)))
    base = linear_term(reg_cols, regs, ADDR) ^ linear_term(warp_cols, warp, ADDR)
    block = max(width, lds.BANK_BYTES)
    per_row = r.banks * lds.BANK_BYTES // block
    words = [z3.UDiv(base ^ linear_term(lane_cols, lane, ADDR), block) for lane in lanes]
    annihilators = _annihilators(r)  # once per query, not per lane pair
    for i in range(k):
        for j in range(i + 1, k):
            s.add(_in_group(annihilators, lanes[i] ^ lanes[j]), words[i] != words[j])
            s.add(z3.URem(words[i], per_row) == z3.URem(words[j], per_row))
    return s, lanes, regs, warp


def conflict_free(
    r: lds.Rule, reg_cols: list[int], lane_cols: list[int], warp_cols: list[int], width: int, timeout_ms: int
) -> Proof:
    """Whether no instruction has two conflicting lanes (no 2-lane clique); ``width`` bytes per
    lane. ``refuted`` carries the model's lanes ``x``, ``y`` and free bits."""
    t0 = time.perf_counter()
    s, (x, y), regs, warp = _cliques(r, reg_cols, lane_cols, warp_cols, width, 2, timeout_ms)
    res = s.check()
    secs = time.perf_counter() - t0
    if res == z3.unsat:
        return Proof("proved", secs)
    if res == z3.sat:
        m = s.model()
        val = {
            name: m.eval(v, True).as_long() for name, v in (("x", x), ("y", y), ("reg", regs), ("warp", warp))
        }
        return Proof("refuted", secs, model=val)
    return Proof("unknown", secs, reason=f"z3: {s.reason_unknown()} (time limit {timeout_ms} ms)")


def clique(
    r: lds.Rule,
    reg_cols: list[int],
    lane_cols: list[int],
    warp_cols: list[int],
    width: int,
    k: int,
    timeout_ms: int,
) -> str:
    """``sat`` when some instruction has ``k`` lanes of one group pairwise asking one bank block for
    different words, ``unsat`` when none has, ``unknown`` past the time limit."""
    return str(_cliques(r, reg_cols, lane_cols, warp_cols, width, k, timeout_ms)[0].check())


def exact_count(
    r: lds.Rule,
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
