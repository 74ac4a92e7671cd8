"""``bankproof agree``: does a writer place every element where a reader reads it?

>>> r = AgreeResult(1, "<api>", "TMA 128B box 8x64 (16-bit)", "layout", 0, 512, "proved",
...                 EngineAnswer("enumeration", "proved", 0), Proof("proved", "z3", 0.01), None, 16, 1024,
...                 tuple(range(0, 1024, 16)))
>>> r.exit_code
0
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.verifier.results.base import EXIT, Result, optional
from bankproof.verifier.results.verify import Proof


@dataclass(frozen=True)
class EngineAnswer(Result):
    """The enumeration engine's verdict over every element the reader reads."""

    engine: str
    status: str
    mismatches: int


@dataclass(frozen=True)
class Element(Result):
    """An element the reader reads from another byte than the writer wrote it to: its coordinates
    in the writer's tile, both byte addresses, and which element (if any) the writer put at the
    reader's address."""

    row: int
    col: int
    writer_address: int | None
    reader_address: int
    reads_element: tuple[int, ...] | None = optional()


@dataclass(frozen=True)
class AgreeResult(Result):
    """Agreement at ``base`` by both engines; ``agreeing_offsets``: the offsets from a ``period``
    boundary (in steps of the alignment both need) at which they agree, ``smallest_alignment`` the
    least power of two whose every multiple is among them (``None``: none is)."""

    schema: int
    spec: str
    writer: str
    reader: str
    base: int
    elements: int
    verdict: str
    enumeration: EngineAnswer
    proof: Proof
    first_mismatch: Element | None
    smallest_alignment: int | None
    period: int
    agreeing_offsets: tuple[int, ...]
    writer_cute: str | None = optional()
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]


__all__ = ["AgreeResult", "Element", "EngineAnswer"]
