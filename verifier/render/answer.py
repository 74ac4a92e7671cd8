"""One access's answer as text, the same in every report (``verify``, ``triton scan``, ``kernel``):
its cost beside its ideal, its state, and the engine that decided it.

>>> from bankproof.verifier.results import AccessAnswer, Proof
>>> a = AccessAnswer.unknown("", instr="ld32", instructions=16, wavefronts=32, ideal=16,
...                          max_per_instruction=2, verdict="refuted", conflict_free=False,
...                          proof=Proof("refuted", "z3", 0.01), engines={"z3": None})
>>> cost(a), state(a), decided(a)
('32 wavefronts (ideal 16, max 2/instruction)', '2-way conflict', '[refuted by z3]')
"""

from __future__ import annotations

from bankproof.verifier.results import AccessAnswer


def _n(x: int | None) -> str:
    return "?" if x is None else str(x)


def cost(a: AccessAnswer) -> str:
    """``W wavefronts (ideal I, max M/instruction)``; ``? wavefronts (ideal I)`` where not counted."""
    if a.wavefronts is None:
        return f"? wavefronts (ideal {_n(a.ideal)})"
    worst = "" if a.max_per_instruction is None else f", max {a.max_per_instruction}/instruction"
    return f"{a.wavefronts} wavefronts (ideal {_n(a.ideal)}{worst})"


def state(a: AccessAnswer) -> str:
    """``conflict-free``, ``N-way conflict``, ``unknown (why)`` or the engines' disagreement."""
    if a.verdict == "disagree":
        detail = ", ".join(f"{e} {r.verdict} {r.wavefronts}" for e, r in a.engines.items())
        return f"ENGINES DISAGREE ({detail}): please report this input"
    if a.verdict == "unknown":
        return f"unknown ({a.reason or ''})"
    return a.state


def decided(a: AccessAnswer) -> str:
    """``[proved by z3]``: the verdict and the engine that decided it (empty when counted only)."""
    if not a.engines or a.proof is None:
        return ""
    return f"[{a.proof.status} by {a.proof.engine}]"


__all__ = ["cost", "decided", "state"]
