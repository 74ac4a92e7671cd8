"""Z3 proofs about one access: conflict-freedom (UNSAT) or a minimal counterexample (SAT), and
exact-count certificates (``k`` lanes on one bank at ``k`` distinct words: SAT; ``k + 1``: UNSAT).

A timeout is ``unknown``, never ``proved``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3
from bankproof.proofs.encode import LANE, SymbolicAccess, bank_block, configure, conflict, same_phase, word


@dataclass(frozen=True)
class Proof:
    """``status`` is ``proved``, ``refuted`` or ``unknown``; ``model`` holds the decoded
    counterexample (lanes and instruction variables) when refuted."""

    status: str
    seconds: float
    reason: str = ""
    model: dict | None = None


def _check(solver, timeout_ms: int) -> tuple[z3.CheckSatResult, str]:
    solver.set("timeout", timeout_ms)
    r = solver.check()
    return r, (solver.reason_unknown() if r == z3.unknown else "")


def conflict_free(sa: SymbolicAccess, timeout_ms: int = 10_000, seed: int = 0) -> Proof:
    """Prove that no instruction has two lanes of one phase on one bank at different words, or
    return the counterexample with the lowest instruction, then the lowest second lane, then the
    lowest first lane (the pair the enumeration engine reports)."""
    configure(seed)
    t0 = time.perf_counter()
    x, y = z3.BitVec("x", LANE), z3.BitVec("y", LANE)
    constraints = [
        z3.ULT(x, y),
        same_phase(sa.instr, x, y, sa.paired),
        conflict(sa.instr, sa.address(x), sa.address(y)),
    ]
    solver = z3.Solver()
    solver.add(*constraints)
    r, why = _check(solver, timeout_ms)
    if r == z3.unsat:
        return Proof("proved", time.perf_counter() - t0)
    if r == z3.unknown:
        return Proof("unknown", time.perf_counter() - t0, f"solver: {why}")
    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    opt.add(*constraints)
    for v in [sa.block, sa.warp, sa.regs, y, x]:
        if v is not None:
            opt.minimize(v)
    model = opt.model() if opt.check() == z3.sat else solver.model()
    decoded = {str(v): model.eval(v, model_completion=True).as_long() for v in [*sa.variables(), x, y]}
    decoded["addresses"] = [
        model.eval(sa.address(z3.BitVecVal(decoded[n], LANE)), model_completion=True).as_long()
        for n in ("x", "y")
    ]
    return Proof("refuted", time.perf_counter() - t0, "", decoded)


def clique(
    sa: SymbolicAccess, k: int, timeout_ms: int = 10_000
) -> tuple[z3.CheckSatResult, dict | None, str]:
    """Whether some instruction has ``k`` lanes in one phase on one bank block at ``k``
    distinct words (the lanes of the witness when SAT)."""
    lanes = [z3.BitVec(f"l{i}", LANE) for i in range(k)]
    solver = z3.Solver()
    first = lanes[0]
    addrs = [sa.address(lane) for lane in lanes]  # each lane's term built once
    solver.add(z3.ULT(lanes[-1], sa.lanes_used) if sa.lanes_used < 32 else z3.BoolVal(True))
    for i, lane in enumerate(lanes[1:], 1):
        solver.add(z3.ULT(lanes[i - 1], lane))
        solver.add(same_phase(sa.instr, first, lane, sa.paired))
        solver.add(bank_block(sa.instr, addrs[0]) == bank_block(sa.instr, addrs[i]))
    words = [word(sa.instr, a) for a in addrs]
    if k > 1:
        solver.add(z3.Distinct(*words))
    r, why = _check(solver, timeout_ms)
    if r == z3.sat:
        m = solver.model()
        return r, {"lanes": [m.eval(lane, model_completion=True).as_long() for lane in lanes]}, ""
    return r, None, why


def exact_degree(sa: SymbolicAccess, k: int, timeout_ms: int = 10_000, seed: int = 0) -> Proof:
    """Certify that the worst phase of any instruction serves exactly ``k`` words on one bank:
    a witness of ``k`` lanes (SAT) and no ``k + 1`` (UNSAT)."""
    configure(seed)
    t0 = time.perf_counter()
    r, witness, why = clique(sa, k, timeout_ms)
    if r == z3.unknown:
        return Proof("unknown", time.perf_counter() - t0, f"solver: {why}")
    if r == z3.unsat:
        return Proof("refuted", time.perf_counter() - t0, f"no {k} lanes share a bank at {k} distinct words")
    r2, more, why2 = clique(sa, k + 1, timeout_ms)
    if r2 == z3.unknown:
        return Proof("unknown", time.perf_counter() - t0, f"solver: {why2}")
    if r2 == z3.sat:
        return Proof(
            "refuted", time.perf_counter() - t0, f"{k + 1} lanes share a bank at distinct words", more
        )
    return Proof("proved", time.perf_counter() - t0, "", witness)
