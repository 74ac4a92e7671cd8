"""One access's answer, the record every reader embeds: what one warp-level shared-memory access
costs, its ideal, which lanes conflict, which engines proved it, and what the count rests on.

``verify`` (spec files and Python values), ``triton scan``, ``kernel``, the workbench and the MCP
tools all hold an :class:`AccessAnswer` built by one function of the engine floor
(:func:`bankproof.verifier.engine.answer.answer`); its keys are the same in every JSON output
(schema 2), beside the reader's own (a spec access's name, a TTGIR op's location, a PTX line).

>>> a = AccessAnswer.unknown("no layout")
>>> a.verdict, a.wavefronts, sorted(a.to_dict())[:4]
('unknown', None, ['conflict', 'conflict_free', 'engines', 'ideal'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from bankproof.verifier.results.base import FrozenMap, Result, optional


@dataclass(frozen=True)
class Conflict(Result):
    """Two lanes of one warp instruction that one bank serves different words in one wavefront:
    the warp, both byte addresses, the bank (``None`` where no single bank is named) and the phase,
    the instruction's wavefronts and ideal, and ``reproduce``: the shell line that replays the
    instruction through ``bankproof wavefronts``. A layout's access also names the instruction
    (``instruction``, its ``block`` and ``register``) and each lane's element (``coords``; an
    ldmatrix/stmatrix row address's element: ``supplied``); a kernel's, the warp's ``execution``
    of the instruction and the lanes' ``threads``."""

    lanes: tuple[int, int]
    warp: int
    byte_addresses: tuple[int, int]
    bank: int | None
    phase: int
    wavefronts: int
    ideal: int
    reproduce: str
    instruction: int | None = optional()
    block: int | None = optional()
    register: int | None = optional()
    coords: tuple[Mapping[str, int], ...] | None = optional()
    supplied: tuple[Mapping[str, int] | None, ...] | None = optional()
    execution: int | None = optional()
    threads: tuple[int, int] | None = optional()


@dataclass(frozen=True)
class Certificate(Result):
    """Z3's exact-count certificate: ``k`` words on one bank are reachable, ``k + 1`` are not."""

    words_per_bank: int
    status: str
    seconds: float
    witness_lanes: tuple[int, ...] | None = optional()


@dataclass(frozen=True)
class EngineResult(Result):
    """One engine's answer for one access."""

    wavefronts: int | None
    verdict: str
    seconds: float | None = optional()
    reason: str | None = optional()
    lemma: str | None = optional()
    conflict_directions: tuple[str, ...] | None = optional()
    note: str | None = optional()
    certificate: Certificate | None = optional()


@dataclass(frozen=True)
class Proof(Result):
    """Which engine decided, how, and why not when it could not."""

    status: str
    engine: str
    seconds: float | None
    reason: str | None = optional()


@dataclass(frozen=True)
class AccessAnswer(Result):
    """One access's answer (every key always present; ``None`` where not known).

    ``instr`` the instruction counted, by the name ``bankproof wavefronts`` takes (``ld128``,
    ``ldsm.x4``, ``cp16.cg``, ``ds_read_b128``), ``vector`` elements per lane in one, ``instructions`` warp
    instructions issued, ``wavefronts`` their total, ``ideal`` the fewest the same instructions
    could take, ``max_per_instruction`` the costliest one's, ``conflict_free``; ``verdict``
    (``proved``, ``refuted``, ``unknown``, ``disagree``) with its ``reason``; ``rests_on``: what
    the count rests on (``measured``, ``assumed``, ``published``, ``not modelled``, or how the SASS
    runs it); ``rule``: the published rule a lane-group count follows; ``engines``: each engine's
    answer; ``proof``: the engine that decided; ``conflict``: two lanes that collide."""

    instr: str | None
    vector: int | None
    instructions: int | None
    wavefronts: int | None
    ideal: int | None
    max_per_instruction: int | None
    conflict_free: bool | None
    verdict: str
    reason: str | None
    rests_on: str | None
    rule: str | None
    engines: dict[str, EngineResult]
    proof: Proof | None
    conflict: Conflict | None

    @staticmethod
    def unknown(reason: str, **known) -> AccessAnswer:
        """An answer with nothing counted (``known``: the fields that are)."""
        given = dict.fromkeys(KEYS) | {"verdict": "unknown", "reason": reason, "engines": FrozenMap()}
        return AccessAnswer(**(given | known))

    @property
    def state(self) -> str:
        """``conflict-free``, ``N-way conflict``, or the verdict when undecided (the conflict
        degree is the costliest instruction's wavefronts over its ideal)."""
        if self.verdict not in ("proved", "refuted"):
            return self.verdict
        if self.conflict_free:
            return "conflict-free"
        per = (self.ideal or 0) // max(1, self.instructions or 0)
        return f"{(self.max_per_instruction or 0) // max(1, per)}-way conflict"


KEYS = tuple(f.name for f in fields(AccessAnswer))  # every answer's JSON keys, in order
