"""Z3 proofs that a writer and a reader agree on the bytes: for every element the reader reads (its
coordinates bounded by the reader's region), the address the reader computes equals the one the
writer wrote, and the element lies in the writer's tile. The base is a constant, or symbolic (every
base aligned to ``A`` below 2^18, all of shared memory). UNSAT is ``proved``; SAT is ``refuted`` with
the element (and base) the solver found; a timeout is ``unknown``.

>>> from bankproof.models.engines.placement import TmaBox
>>> from bankproof.models.engines.tma import MODES
>>> box = TmaBox(MODES["64B"], 8, 32, 16)
>>> prove(box, box, base=256).status, prove(box, box, align=128).status
('proved', 'proved')
"""

from __future__ import annotations

import time

import z3
from bankproof.models.engines.placement import Placement
from bankproof.models.errors import InputError
from bankproof.proofs.conflicts import Proof
from bankproof.proofs.encode import configure

WIDTH = 32
SHARED_LIMIT = 1 << 18  # bytes of shared address space any base lies below


class Z3Ops:
    """The address functions' shift right, on bit-vectors (logical)."""

    @staticmethod
    def shr(x, n: int):
        return z3.LShR(x, n) if isinstance(x, z3.BitVecRef) else x >> n


Z3 = Z3Ops()


def _in(v: z3.BitVecRef, lo: int, n: int) -> z3.BoolRef:
    return z3.And(z3.UGE(v, lo), z3.ULT(v, lo + n))


def prove(writer: Placement, reader: Placement, base: int | None = None, align: int | None = None,
          residue: int = 0, timeout_ms: int = 10_000, seed: int = 0) -> Proof:  # fmt: skip
    """Agreement at ``base``, or at every base ``residue`` past a multiple of ``align`` (one of
    ``base`` and ``align`` must be given)."""
    if (base is None) == (align is None):
        raise InputError("agree", "base", "give a base or an alignment, not both")
    configure(seed)
    t0 = time.perf_counter()
    row, col = z3.BitVec("row", WIDTH), z3.BitVec("col", WIDTH)
    b = z3.BitVecVal(base, WIDTH) if base is not None else z3.BitVec("base", WIDTH)
    try:
        wa, ra = writer.address(row, col, b, Z3), reader.address(row, col, b, Z3)
    except InputError as e:
        return Proof("unknown", time.perf_counter() - t0, f"not encodable: {e}")
    (r0, c0), (nr, nc) = reader.origin, reader.shape
    (w0, x0), (wn, xn) = writer.origin, writer.shape
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(_in(row, r0, nr), _in(col, c0, nc))
    if align is not None:
        s.add(b & (align - 1) == residue, z3.ULT(b, SHARED_LIMIT))
    s.add(z3.Or(z3.Not(z3.And(_in(row, w0, wn), _in(col, x0, xn))), wa != ra))
    r = s.check()
    seconds = time.perf_counter() - t0
    if r == z3.unsat:
        return Proof("proved", seconds)
    if r == z3.unknown:
        return Proof("unknown", seconds, f"solver: {s.reason_unknown()}")
    m = s.model()
    got = {
        k: m.eval(v, model_completion=True).as_long() for k, v in (("row", row), ("col", col), ("base", b))
    }
    return Proof("refuted", seconds, model=got)


__all__ = ["Z3", "prove"]
