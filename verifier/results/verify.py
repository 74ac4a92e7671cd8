"""The results of ``verify`` and ``synth``: each access's wavefronts, its proof and its
counterexample; the synthesized layout with its optimality certificate.

>>> UnreadResult("ld", "load", "an atom bankproof cannot translate").to_dict()["reason"]
'an atom bankproof cannot translate'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bankproof.verifier.results.answer import AccessAnswer, Proof
from bankproof.verifier.results.base import EXIT, Result, embedded, hidden, optional

# --- verify ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AccessResult(Result):
    """One access of the spec: its name and kind, and its answer (the keys of
    :class:`~bankproof.verifier.results.answer.AccessAnswer`, read as this record's attributes)."""

    name: str
    kind: str
    answer: AccessAnswer = embedded()
    lower_bound_wavefronts: int | None = optional()  # synth: the bound this access meets


@dataclass(frozen=True)
class MemoryRef(Result):
    notation: str
    text: str
    warnings: tuple[str, ...] | None = optional()


@dataclass(frozen=True)
class UnreadResult(Result):
    """An access of the spec that was not counted, and why (an atom bankproof cannot translate)."""

    name: str
    kind: str
    reason: str


@dataclass(frozen=True)
class VerifyResult(Result):
    """``bankproof verify``: every access of a problem, decided by the engines (schema 2)."""

    schema: int
    spec: str
    arch: str
    dtype: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    memory: MemoryRef
    verdict: str
    accesses: tuple[AccessResult, ...]
    unread: tuple[UnreadResult, ...] | None = optional()  # accesses not counted: the verdict is unknown

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]

    @property
    def conflict_free(self) -> bool | None:
        """True when every access is proved conflict-free, False when one is refuted."""
        return {"proved": True, "refuted": False}.get(self.verdict)

    def access(self, name: str) -> AccessResult:
        for a in self.accesses:
            if a.name == name:
                return a
        raise KeyError(name)


# --- synth ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusTime(Result):
    status: str
    seconds: float
    reason: str | None = optional()


@dataclass(frozen=True)
class SmtSynthesis(Result):
    """An SMT synthesis independent of §5.4, its layout counted by enumeration."""

    status: str
    seconds: float
    reason: str | None = optional()
    enumerated_cost: int | None = optional()
    agrees: bool | None = optional()
    offset: tuple | None = optional()


@dataclass(frozen=True)
class Optimality(Result):
    """Z3: no invertible linear layout with any instruction choice the spec leaves open costs less
    than ``cost`` (``proof``); ``smt_synthesis``: a layout costing at most ``cost`` found by Z3
    alone, its cost enumerated."""

    cost: int
    proof: StatusTime
    smt_synthesis: SmtSynthesis


@dataclass(frozen=True)
class SynthInfo(Result):
    writer: str
    reader: str
    seconds: float
    vector_elements: int
    memory: dict
    lower_bound_per_instruction: dict[str, int]
    conflict_free: bool
    meets_lower_bound: bool
    optimality: Optimality | None = optional()
    instructions: dict[str, str] | None = optional()  # the access -> instruction the search chose
    universal_bound: int | None = optional()  # distinct bytes / 128 per wavefront, writer + reader
    optimal_over: str | None = optional()  # the family the optimality claim ranges over
    runners_up: tuple[dict, ...] | None = optional()  # other (vector, instructions) choices, cheapest first


@dataclass(frozen=True)
class FamilyMember(Result):
    """A layout every engine of the spec can take (``engines``: how each takes it), counted with
    the spec's accesses: their ``wavefronts`` and verdict, or ``reason`` an access cannot use it."""

    engines: dict[str, str]
    layout: str
    offset: tuple
    wavefronts: int | None
    verdict: str
    instructions: dict[str, str] | None = optional()  # the access -> the instruction counted
    reason: str | None = optional()
    costs: dict[str, int] | None = optional()  # what else it costs (see ConstrainedSynthesis.pareto)


PADDING = "padding"  # the family of plain and padded layouts, named as if an engine took them


@dataclass(frozen=True)
class ConstrainedSynthesis(Result):
    """The cheapest layout among those every engine touching the buffer can take (``members``,
    enumerated whole, each count proved by the engines: the optimum's proof is by exhaustion),
    beside the unconstrained optimum, what the constraint costs, and the engines that cannot take
    the unconstrained one; ``empty`` says which engines exclude each other when no layout is left."""

    engines: tuple[str, ...]
    members: tuple[FamilyMember, ...]
    refused: tuple[str, ...]
    optimum: FamilyMember | None
    optimal_wavefronts: int | None
    unconstrained_wavefronts: int | None
    cost: int | None
    excluded_by: tuple[str, ...]
    proof: Proof
    empty: str | None = optional()
    # members no other member beats in every cost (wavefronts, warp instructions issued, engine
    # operations per tile, XOR terms of the address), by exhaustion; and the one the weights pick
    pareto: tuple[int, ...] = ()
    weights: dict[str, float] | None = optional()
    chosen: int | None = optional()

    @property
    def padding_only(self) -> bool:
        """The family is plain and padded layouts beside the synthesized one (``synth --padded``):
        no engine constrains it."""
        return self.engines == (PADDING,)


@dataclass(frozen=True)
class SynthResult(VerifyResult):
    """``bankproof synth``: the verify report of the synthesized layout, plus the synthesis (and,
    where the spec lists other engines that touch the buffer, the constrained synthesis)."""

    synth: SynthInfo | None = optional()
    constrained: ConstrainedSynthesis | None = optional()
    layout: Any = hidden()

    @property
    def notations(self) -> dict[str, str]:
        """The synthesized layout in every notation that expresses it."""
        return dict(self.synth.memory["notations"]) if self.synth else {}
