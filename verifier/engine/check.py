"""``bankproof verify`` on a spec: each of its accesses a problem, answered by
:func:`~bankproof.verifier.engine.answer.answer`, and the report they make.

Enumeration is exhaustive (every instruction of every warp through the measured hardware
model), so its verdicts are proofs: ``proved`` when every instruction takes its ideal number of
wavefronts, ``refuted`` with a conflict otherwise, ``unknown`` when the model cannot say.

>>> from bankproof.verifier.api.spec_file import parse_spec
>>> blocked = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
>>> spec = parse_spec({"shape": [32], "dtype": "f32", "memory": {"formula": "i"},
...                    "access": [{"name": "st", "kind": "store", "layout": {"triton": blocked}}]})
>>> r = verify(spec)
>>> r.verdict, r.accesses[0].wavefronts, r.accesses[0].state
('proved', 1, 'conflict-free')
"""

from __future__ import annotations

from bankproof.verifier.engine.answer import AccessProblem, answer, combine
from bankproof.verifier.engine.engines import ENGINE_NAMES, ENGINES
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.results import SCHEMA, AccessResult, MemoryRef, UnreadResult, VerifyResult

__all__ = ["ENGINES", "ENGINE_NAMES", "problem_of", "verify"]


def problem_of(spec: Spec, acc: AccessSpec) -> AccessProblem:
    """The question one access of ``spec`` asks."""
    at = next((i for i, x in enumerate(spec.accesses) if x is acc), None)
    return AccessProblem(
        memory=spec.memory,
        layout=acc.layout,
        elem_bits=spec.elem_bits,
        kind=acc.kind,
        arch=spec.arch,
        instr=acc.instr,
        dims=tuple(spec.dims),
        where=None if at is None else f"spec: access[{at}] ({acc.name})",
    )


def verify(spec: Spec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> VerifyResult:
    """The report of ``bankproof verify``."""
    accesses = tuple(
        AccessResult(acc.name, acc.kind, answer(problem_of(spec, acc), engines, timeout_s))
        for acc in spec.accesses
    )
    unread = tuple(UnreadResult(u.name, u.kind, u.reason) for u in spec.unread)
    return VerifyResult(
        schema=SCHEMA,
        spec=spec.path,
        arch=spec.arch,
        dtype=spec.dtype,
        shape=tuple(spec.shape),
        dims=tuple(spec.dims),
        memory=MemoryRef(spec.memory_notation, spec.memory_text, spec.warnings or None),
        verdict=combine([a.verdict for a in accesses] + ["unknown"] * len(unread)),
        accesses=accesses,
        unread=unread or None,
    )
