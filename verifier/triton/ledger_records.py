"""The whole-kernel ledger as frozen records: what :func:`~bankproof.verifier.triton.ledger.build`
returns and every reader (the scan's text, SARIF, the profile, the corpus and its results store)
takes. ``to_dict()`` is the JSON; :func:`read_ledger` reads it back, every field checked.

>>> e = LedgerEntry(location="k.py:7:3", family="lsu", instr="st32", ptx_lines=(5,),
...                 instructions_per_warp=1, instructions=2, loops=(), executions=1, chain=("k.py:7",),
...                 sass_lines=("k.py:7",), op="tt.reduce", kind="scratch", counted=True, wavefronts=2)
>>> e.to_dict()["wavefronts"], "reason" in e.to_dict()
(2, False)
>>> read_ledger(LedgerReport(entries=(e,)).to_dict()).entries[0] == e
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.verifier.results import Result, optional
from bankproof.verifier.results.decode import decode

COUNTED_FAMILIES = ("lsu", "ldgsts", "atomic")  # whose entries count LSU shared wavefronts


@dataclass(frozen=True)
class LoopTrips(Result):
    """One TTGIR ``scf.for`` around an entry: its line, its bounds as written, its trips (``None``:
    not decided by the arguments given)."""

    ttgir_line: int
    bounds: str
    trips: int | None
    unknown: str | None = optional()  # trips not decided: the name a formula gives them
    why: str | None = optional()  # ... and why (a bound loaded from memory, an argument not given)


@dataclass(frozen=True, kw_only=True)
class LedgerEntry(Result):
    """One group of PTX shared-memory instructions (one source location, instruction, loop nest)
    and its owner: ``instructions`` per execution over the CTA's warps, ``executions`` per CTA
    (``None``: a loop bound not decided, ``executions_reason`` says which), ``wavefronts`` and
    ``ideal`` per execution (absent: not counted in LSU wavefronts, or not known: ``reason``), the
    totals per CTA where both are known. The branch arms it runs under that the arguments do not
    decide are ``condition`` (and ``condition_key``: ``(condition name, arm)``)."""

    location: str
    family: str  # lsu / ldgsts / tma / mma / mbarrier / tensormap / tmem / atomic
    instr: str
    ptx_lines: tuple[int, ...]
    cache: tuple[str, ...] | None = optional()
    instructions_per_warp: int
    instructions: int
    instructions_reached: int | None = optional()
    loops: tuple[LoopTrips, ...] | None
    executions: int | None
    executions_reason: str | None = optional()
    cycles: tuple[str, ...] | None = optional()
    not_run: str | None = optional()
    condition: tuple[str, ...] | None = optional()
    condition_key: tuple[tuple[str, bool], ...] | None = optional()
    depends_on: tuple[str, ...] | None = optional()
    condition_why: str | None = optional()
    conditional: bool | None = optional()
    note: str | None = optional()
    chain: tuple[str, ...]
    sass_lines: tuple[str, ...]
    op: str
    kind: str
    counted: bool
    reason: str | None = optional()
    wavefronts: int | None = optional()
    ideal: int | None = optional()
    source: str | None = optional()
    buffers: tuple[str, ...] | None = optional()
    wavefronts_max: int | None = optional()
    lines_note: str | None = optional()
    ncu_reads: tuple[int, int] | None = optional()
    gmma_wavefronts: int | None = optional()
    gmma_note: str | None = optional()
    total_wavefronts: int | None = optional()
    total_instructions: int | None = optional()
    total_wavefronts_max: int | None = optional()

    def to_dict(self) -> dict:
        """The JSON: ``wavefronts`` is ``null`` where an LSU, cp.async or atomic entry's count is
        unknown, and absent where the family is not counted in LSU wavefronts at all."""
        out = super().to_dict()
        if self.family in COUNTED_FAMILIES and "wavefronts" not in out:
            out["wavefronts"] = None
        return out


@dataclass(frozen=True)
class Span(Result):
    """The least and most a total can be, over the branch arms the arguments do not decide."""

    wavefronts: tuple[int, int]
    instructions: tuple[int, int] | None = optional()  # wgmma's reads: wavefronts only


@dataclass(frozen=True)
class Term(Result):
    """One term of a formula: the product of ``unknowns`` (loop trip counts; none: a constant) times
    ``wavefronts`` and ``instructions``."""

    unknowns: tuple[str, ...]
    wavefronts: int
    instructions: int


@dataclass(frozen=True)
class Formula(Result):
    """A total as an exact expression in loop trip counts the arguments cannot decide
    (``96 + 64*trips_L57``): ``terms`` to evaluate, the two sums as text."""

    wavefronts: str
    instructions: str
    terms: tuple[Term, ...]

    def at(self, values: Mapping[str, int]) -> tuple[int, int]:
        """(wavefronts, instructions) with each unknown at its value.

        >>> Formula("2 + 3*n", "1 + n", (Term((), 2, 1), Term(("n",), 3, 1))).at({"n": 4})
        (14, 5)
        """
        w = i = 0
        for t in self.terms:
            k = 1
            for name in t.unknowns:
                k *= values[name]
            w, i = w + t.wavefronts * k, i + t.instructions * k
        return w, i


@dataclass(frozen=True)
class Unknown(Result):
    """A loop whose trip count a formula leaves open: its name, TTGIR line, bounds as written and
    why the arguments cannot decide it. Trip counts are integers >= 0."""

    name: str
    ttgir_line: int
    bounds: str
    why: str


@dataclass(frozen=True)
class ClassTotal(Result):
    """Per CTA, one Nsight Compute op class (``ld``, ``st``, ``ldsm``, ``stsm``, ``ldgsts``,
    ``ldgsts_bypass``, ``gmma``): ``None`` where an entry's count or executions are unknown or a
    branch is undecided (then ``range`` and ``depends_on``)."""

    wavefronts: int | None
    instructions: int | None
    depends_on: tuple[str, ...] | None = optional()
    range: Span | None = optional()
    ideal: int | None = optional()
    note: str | None = optional()
    ncu_range: tuple[int, int] | None = optional()
    ncu_note: str | None = optional()
    formula: Formula | None = optional()  # the total in trip counts the arguments leave open


@dataclass(frozen=True)
class LaunchTotals(Result):
    """A whole launch's totals (``ctas`` CTAs) by op class: ``how`` they were found (every CTA
    alike, proved by the ledger with the program ids unknown; or each CTA run), else ``None``
    totals and ``why`` not."""

    ctas: int
    totals: Mapping[str, ClassTotal] | None = optional()
    how: str | None = optional()
    why: str | None = optional()


@dataclass(frozen=True)
class LedgerReport(Result):
    """One compiled kernel's ledger: its ``entries``, the PTX instruction groups no TTGIR op owns
    (``unattributed``), where the scan's count and the PTX's addresses differ (``disagreements``),
    ``totals`` by op class and why they are not complete (``incomplete``: empty when they are).
    Where the target has no ledger, only ``note`` says why."""

    kernel: str | None = optional()
    threads: int | None = optional()
    arguments: tuple[str, ...] | None = optional()
    entries: tuple[LedgerEntry, ...] = ()
    unattributed: tuple[str, ...] = ()
    disagreements: tuple[str, ...] = ()
    totals: Mapping[str, ClassTotal] | None = optional()
    incomplete: tuple[str, ...] | None = optional()
    note: str | None = optional()
    unknowns: tuple[Unknown, ...] | None = optional()  # the trip counts the totals' formulas name
    launch: LaunchTotals | None = optional()  # the whole launch's (a captured launch's replay)


def read_ledger(value: object, where: str = "ledger") -> LedgerReport:
    """A ledger read back from its JSON form (``InputError`` naming the field if it is not one)."""
    return decode(LedgerReport, value, where)
