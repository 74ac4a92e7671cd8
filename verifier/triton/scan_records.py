"""The scan of a TTGIR module as frozen records: what :func:`~bankproof.verifier.triton.scan.scan_module`
returns (a :class:`ScanReport`: buffers, their accesses and optimum, conversions), what the counting
and the optimum search hand the scan (:class:`AccessCount`, :class:`Optimum`), and every reader (text,
SARIF, the workbench, the ledger, the corpus and its baseline) takes. ``to_dict()`` is the JSON.

>>> loc = Location(ttgir="k.ttgir", ttgir_line=7)
>>> answer = AccessAnswer.unknown("not counted", instr="ld128", instructions=16, wavefronts=64, ideal=64)
>>> row = AccessRow(op="ttg.local_load", kind="load", location=loc, layout="#blocked", shared="#shared",
...                 shape=(64, 64), dtype="f16", answer=answer)
>>> row.to_dict()["location"], row.counted, row.ideal
({'ttgir': 'k.ttgir', 'ttgir_line': 7}, True, 64)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.verifier.results import AccessAnswer, Result, embedded, optional
from bankproof.verifier.triton.ledger_records import LedgerReport


@dataclass(frozen=True, kw_only=True)
class Location(Result):
    """Where an op is: its TTGIR file and line, its Python source (``loc(...)``) when given, the
    source's name for its value (a name location) and the loops around it (absent: none)."""

    ttgir: str
    ttgir_line: int
    source: str | None = optional()
    line: int | None = optional()
    column: int | None = optional()
    name: str | None = optional()
    loop_depth: int | None = optional()


@dataclass(frozen=True, kw_only=True)
class AccessCount(Result):
    """One access counted with its first deliverable instruction: its answer (the engine's, the
    keys every command shares), and for a copy whose redundant lanes are off, the warps with a lane
    on (``live_instructions``) and the count with every lane on (``unguarded_wavefronts``)."""

    answer: AccessAnswer = embedded()
    live_instructions: int | None = optional()
    redundant: str | None = optional()
    unguarded_wavefronts: int | None = optional()


@dataclass(frozen=True, kw_only=True)
class AccessRow(Result):
    """One access of a buffer: the op, where, its layouts and shape, and its answer (absent counts
    with ``error`` when it was not analysed); ``rests_on`` is what the count rests on."""

    op: str
    kind: str  # load / store
    location: Location
    layout: str
    shared: str
    shape: tuple[int, ...]
    dtype: str
    answer: AccessAnswer = embedded()
    live_instructions: int | None = optional()
    redundant: str | None = optional()
    unguarded_wavefronts: int | None = optional()
    wavefronts_max: int | None = optional()
    lines_note: str | None = optional()
    width_assumed: str | None = optional()
    error: str | None = optional()

    @property
    def counted(self) -> bool:
        return self.wavefronts is not None


@dataclass(frozen=True, kw_only=True)
class BetterWriter(Result):
    """A writer that moves the same global lines per warp instruction and costs less (or, without
    ``layout``, how many were searched and that none does)."""

    wavefronts: int
    searched: int
    reason: str
    per_access: int | None = optional()
    instr: str | None = optional()
    layout: Mapping[str, tuple[tuple[int, ...], ...]] | None = optional()
    shared: str | None = optional()


@dataclass(frozen=True, kw_only=True)
class Optimum(Result):
    """A buffer's optimum as one search found it: ``None`` where it is unknown (``reason``)."""

    optimal_wavefronts: int | None
    gap: int | None
    reason: str | None = optional()
    optimal_same_instructions: int | None = optional()
    better_layout: str | None = optional()
    better_instructions: tuple[str, ...] | None = optional()
    better_writer: BetterWriter | None = optional()


@dataclass(frozen=True, kw_only=True)
class BufferReport(Result):
    """One shared buffer: its accesses, their wavefronts, and its :class:`Optimum` (its fields read
    as the buffer's: the optimum for its writers and readers together, ``gap`` above it, ``None``
    where unknown with ``reason`` saying why, and a better layout).
    ``buffer`` is its allocation's SSA name; ``name`` what the source calls it (the TTGIR's name
    locations; ``role`` the dot operand it is, where it is one); ``label`` names it in reports
    and baselines."""

    buffer: str
    name: str | None = optional()
    role: str | None = optional()
    shape: tuple[int, ...]
    dtype: str
    shared: str
    accesses: tuple[AccessRow, ...]
    wavefronts: int
    optimum: Optimum = embedded()

    @property
    def label(self) -> str:
        """What the source calls the buffer, with its dot role (``a:A``); where the TTGIR has no
        name for it, its first access's source line (``k.py:40``), else its SSA name (``%1``)."""
        name = self.name
        if name is None:
            where = next((a.location for a in self.accesses if a.location.source), None)
            name = (
                f"{where.source.replace(chr(92), '/').rsplit('/', 1)[-1]}:{where.line}"
                if where
                else self.buffer
            )
        return f"{name}:{self.role}" if self.role else name

    @property
    def shown(self) -> str:
        """How reports print the buffer: its label and SSA name (``a:A (%a_31)``)."""
        return self.buffer if self.label == self.buffer else f"{self.label} ({self.buffer})"

    @property
    def layout_gap(self) -> int | None:
        """What another shared layout alone (the same instructions) would save: the part of the
        gap the compiler's layout choice controls (``None`` where the optimum is unknown)."""
        same = self.optimal_same_instructions
        best = same if same is not None else self.optimal_wavefronts
        return None if best is None else self.wavefronts - best


@dataclass(frozen=True, kw_only=True)
class SharedPlan(Result):
    """The cheapest layout and instructions a conversion can go through shared memory with."""

    layout: str
    store: AccessCount
    load: AccessCount
    wavefronts: int


@dataclass(frozen=True, kw_only=True)
class ConversionRow(Result):
    """A ``ttg.convert_layout``: its layouts and the best shared-memory plan (or ``error``)."""

    op: str
    location: Location
    source_layout: str | None = optional(key="from")
    target_layout: str | None = optional(key="to")
    shape: tuple[int, ...] | None = optional()
    dtype: str | None = optional()
    shared_plan: SharedPlan | None = optional()
    error: str | None = optional()


@dataclass(frozen=True, kw_only=True)
class DescriptorSummary(Result):
    """The MMA descriptors in the PTX against their ``nvmma_shared`` operands: how many were
    checked, how many equal, how many are not constants, and the mismatches."""

    checked: int
    agree: int
    undecided: int
    note: str | None = optional()
    mismatches: tuple[str, ...] | None = optional()


@dataclass(frozen=True, kw_only=True)
class ScanReport(Result):
    """One TTGIR module's scan; with its PTX, the whole-kernel ``ledger`` and the ``descriptors``."""

    file: str
    target: str | None
    num_warps: int | None
    buffers: tuple[BufferReport, ...]
    conversions: tuple[ConversionRow, ...]
    ledger: LedgerReport | None = optional()
    descriptors: DescriptorSummary | None = optional()
