"""Optimality over every invertible linear memory layout with maximal vectorization (Z3).

The unknown is the matrix M: tensor bits -> element-offset bits, as column bit-vectors
``m_i = M e_i`` (invertible: some N has M N = I). Vector bits are fixed to the maximal V (both
accesses vectorize, every other column aligned). For an access with in-phase lane span L, a lane
difference t in L keeps two lanes on one bank block when M t has zero block bits, and in one
word when it also has zero word bits; the wavefronts per phase are
``(1 + #same-block t) / (1 + #same-word t)``.

- ``synthesize``: a conflict-free M found without §5.4 (or UNSAT: none exists);
- ``prove_optimal``: UNSAT that any M gives fewer total wavefronts (read + write) than a
  given cost.

Both stop at ``MAX_BITS`` tensor bits (``unknown`` beyond) and honour a timeout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3
from bankproof.models.errors import log2
from bankproof.models.layout import LinearLayout
from bankproof.models.swizzle import optimal_swizzle
from bankproof.proofs.encode import configure

MAX_BITS = 14


@dataclass(frozen=True)
class Outcome:
    status: str  # proved | refuted | unknown (prove_optimal); found | impossible | unknown (synthesize)
    seconds: float
    reason: str = ""
    layout: LinearLayout | None = None


def _span(vectors: list[int]) -> list[int]:
    out = [0]
    for v in vectors:
        out += [x ^ v for x in out]
    return sorted(set(out) - {0})


class _Problem:
    def __init__(self, a: LinearLayout, b: LinearLayout, elem_bits: int, kind_a: str, kind_b: str):
        self.s = optimal_swizzle(a, b, elem_bits, kind_a, kind_b)
        sp = self.s.space
        self.d = sp.bits
        self.e = elem_bits // 8
        self.v = len(self.s.vec)
        self.request = (1 << self.v) * self.e
        self.m = [z3.BitVec(f"m{i}", self.d) for i in range(self.d)]
        self.constraints: list = []
        # Invertible: M N = I.
        n = [[z3.Bool(f"n{i}_{j}") for j in range(self.d)] for i in range(self.d)]
        for j in range(self.d):
            acc = z3.BitVecVal(0, self.d)
            for i in range(self.d):
                acc = acc ^ z3.If(n[i][j], self.m[i], z3.BitVecVal(0, self.d))
            self.constraints.append(acc == 1 << j)
        # Maximal vectorization: V at offset bits 0..v-1, every other column aligned.
        low = (1 << self.v) - 1
        for i in range(self.d):
            unit = 1 << i
            if unit in self.s.vec:
                self.constraints.append(self.m[i] == 1 << self.s.vec.index(unit))
            elif self.v:
                self.constraints.append(self.m[i] & low == 0)
        self.lo = log2(max(self.request, 4) // self.e) if self.request >= self.e else 0
        self.hi = min(self.d, log2(128 // self.e))

    def apply(self, t: int) -> z3.BitVecRef:
        acc = z3.BitVecVal(0, self.d)
        for i in range(self.d):
            if (t >> i) & 1:
                acc = acc ^ self.m[i]
        return acc

    def field(self, x: z3.BitVecRef, lo: int, hi: int) -> z3.BoolRef:
        """Bits [lo, hi) of x are zero."""
        if hi <= lo:
            return z3.BoolVal(True)
        mask = ((1 << hi) - 1) ^ ((1 << lo) - 1)
        return x & mask == 0

    def conflict_free(self, lanes: list[int]) -> list[z3.BoolRef]:
        """No lane difference keeps two lanes on one bank block in different words."""
        out = []
        for t in _span([x for x in lanes if x]):
            mt = self.apply(t)
            out.append(z3.Implies(self.field(mt, self.lo, self.hi), self.field(mt, self.hi, self.d)))
        return out

    def wavefronts(self, lanes: list[int], tag: str) -> tuple[z3.ArithRef, list]:
        """An Int equal to the wavefronts per phase of an access with in-phase lanes ``lanes``."""
        same_block, same_word = [], []
        for t in _span([x for x in lanes if x]):
            mt = self.apply(t)
            blk = self.field(mt, self.lo, self.hi)
            same_block.append(blk)
            same_word.append(z3.And(blk, self.field(mt, self.hi, self.d)))
        wave = z3.Int(f"wave_{tag}")
        nb = 1 + z3.Sum([z3.If(c, 1, 0) for c in same_block]) if same_block else z3.IntVal(1)
        nw = 1 + z3.Sum([z3.If(c, 1, 0) for c in same_word]) if same_word else z3.IntVal(1)
        cons = [z3.Or([wave == (1 << k) for k in range(6)]), wave * nw == nb]
        return wave, cons


def _too_big(p: _Problem, t0: float) -> Outcome | None:
    if p.d > MAX_BITS:
        return Outcome(
            "unknown",
            time.perf_counter() - t0,
            f"{p.d} tensor bits: the optimality encoding is limited to {MAX_BITS}",
        )
    return None


def synthesize(
    a: LinearLayout,
    b: LinearLayout,
    elem_bits: int,
    kind_a: str = "store",
    kind_b: str = "load",
    timeout_ms: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """A conflict-free memory layout for both accesses, found by Z3 alone."""
    configure(seed)
    t0 = time.perf_counter()
    p = _Problem(a, b, elem_bits, kind_a, kind_b)
    if (big := _too_big(p, t0)) is not None:
        return big
    solver = z3.SolverFor("QF_BV")
    solver.set("timeout", timeout_ms)
    solver.add(*p.constraints)
    for lanes in (p.s.a_bank, p.s.b_bank):
        solver.add(*p.conflict_free(lanes))
    r = solver.check()
    if r == z3.unknown:
        return Outcome("unknown", time.perf_counter() - t0, f"solver: {solver.reason_unknown()}")
    if r == z3.unsat:
        return Outcome("impossible", time.perf_counter() - t0, "no conflict-free layout exists")
    model = solver.model()
    cols = [model.eval(m, model_completion=True).as_long() for m in p.m]
    # M maps tensor bits to offset bits; the memory layout is its inverse, offset -> tensor.
    inverse = LinearLayout.from_bases({"tensor": [[c] for c in cols]}, {"offset": 1 << p.d})
    offset_to_tensor = [inverse.invert().in_bases("offset")[k][0] for k in range(p.d)]
    sp = p.s.space
    layout = LinearLayout.from_bases(
        {"offset": [sp.unpack_row_major(x) for x in offset_to_tensor]}, dict(sp.dims)
    )
    return Outcome("found", time.perf_counter() - t0, "", layout)


def prove_optimal(
    a: LinearLayout,
    b: LinearLayout,
    elem_bits: int,
    cost: int,
    instructions: tuple[int, int],
    phases: tuple[int, int],
    kind_a: str = "store",
    kind_b: str = "load",
    timeout_ms: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """UNSAT of: some invertible M with maximal vectorization costs fewer than ``cost`` total
    wavefronts (``instructions[x] * phases[x] * wavefronts_per_phase[x]`` summed)."""
    configure(seed)
    t0 = time.perf_counter()
    p = _Problem(a, b, elem_bits, kind_a, kind_b)
    if (big := _too_big(p, t0)) is not None:
        return big
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*p.constraints)
    total = 0
    for (lanes, tag), n, ph in zip(((p.s.a_bank, "a"), (p.s.b_bank, "b")), instructions, phases):
        wave, cons = p.wavefronts(lanes, tag)
        solver.add(*cons)
        total = total + n * ph * wave
    solver.add(total < cost)
    r = solver.check()
    if r == z3.unsat:
        return Outcome("proved", time.perf_counter() - t0)
    if r == z3.unknown:
        return Outcome("unknown", time.perf_counter() - t0, f"solver: {solver.reason_unknown()}")
    return Outcome("refuted", time.perf_counter() - t0, "a cheaper layout exists")
