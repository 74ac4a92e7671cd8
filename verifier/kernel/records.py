"""The records that cross the kernel pipeline's stages: the launch as the user states it, the
machine's trace of one CTA (every dynamic instance of every shared-memory instruction), and the
report (per instruction, per source line, per kernel). All frozen; renderers read fields.

>>> Launch(block=(128, 1, 1)).threads
128
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from bankproof.verifier.kernel.buffers import Buffer
from bankproof.verifier.results import AccessAnswer, Result, embedded, optional


@dataclass(frozen=True)
class Launch:
    """One CTA of a launch: ``block`` (x, y, z) threads, the ``grid``, which ``cta`` is analysed,
    ``dynamic_smem`` bytes, ``args``: kernel arguments by PTX parameter name or C++ position
    (``"0"``, ``"1"``...), integers (a pointer is its address), and ``buffers``: what pointer
    arguments point to, keyed the same way (:mod:`~bankproof.verifier.kernel.buffers`)."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int] = (1, 1, 1)
    cta: tuple[int, int, int] = (0, 0, 0)
    dynamic_smem: int = 0
    args: tuple[tuple[str, int], ...] = ()
    buffers: tuple[tuple[str, Buffer], ...] = ()
    names: tuple[tuple[str, str], ...] = ()  # PTX parameter name -> the name a message shows (C++'s)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class Instances:
    """Every dynamic instance of one static shared-memory instruction over the CTA's warps: row
    ``i`` is warp ``warp[i]``'s ``execution[i]``-th execution; per lane its byte address in shared
    memory, whether it is active (issues) and reached (its warp's control flow is there);
    ``known[i]`` is False where an active lane's address or guard is not known. ``source`` is the
    global address per lane (cp.async), with ``source_known``."""

    warp: np.ndarray
    execution: np.ndarray
    offsets: np.ndarray
    active: np.ndarray
    reached: np.ndarray
    known: np.ndarray
    source: np.ndarray | None = None
    source_known: np.ndarray | None = None

    @staticmethod
    def stack(rows: list) -> Instances:
        """One record of the machine's per-step rows ``(warps, executions, offsets, active, reached,
        known, (source, source_known) or None)``."""

        def cat(i: int) -> np.ndarray:
            return np.concatenate([r[i] for r in rows])

        src = [r[6] for r in rows]
        has = all(x is not None for x in src)
        first = np.concatenate([x[0] for x in src]) if has else None
        second = np.concatenate([x[1] for x in src]) if has else None
        return Instances(cat(0), cat(1), cat(2), cat(3), cat(4), cat(5), first, second)


@dataclass(frozen=True)
class Trace:
    """What the machine saw running one CTA: instances per static instruction index, warp
    executions of every counted instruction (``executed``: index -> warps that ran it, with a lane
    on / reached), the points where it could not follow the program (``lost``: index -> why), and
    notes on what it assumed."""

    instances: Mapping[int, Instances]
    executed: Mapping[int, tuple[int, int]]
    lost: Mapping[int, str]
    notes: tuple[str, ...]
    steps: int
    warps: int
    symbols: Mapping[str, int] = field(default_factory=dict)
    skipped: Mapping[int, int] = field(default_factory=dict)  # index -> warps a forward branch took around it
    final: Mapping = field(default_factory=dict, repr=False)  # register -> its value when the CTA ended
    engines: Mapping[int, tuple] = field(default_factory=dict)  # TMA / wgmma index -> EngineUse rows
    why: Mapping[int, str] = field(default_factory=dict)  # index -> what its unknown address depends on


@dataclass(frozen=True)
class EngineUse:
    """One dynamic use of shared memory by an engine: a TMA copy (``address``: its shared box,
    ``tensor_map``: the kernel parameter holding its map) or a wgmma (``descriptors``: A's, or
    ``None`` when A is in registers, and B's), by ``warp`` in its ``execution``."""

    warp: int
    execution: int
    address: int | None = None
    tensor_map: str | None = None
    descriptors: tuple[int | None, int | None] = (None, None)


@dataclass(frozen=True)
class SourceLine(Result):
    """A source location: ``file:line``, column 0 when unknown."""

    file: str
    line: int
    column: int = 0


@dataclass(frozen=True)
class InstructionReport(Result):
    """One static shared-memory instruction over every warp and dynamic instance of the CTA: where
    it is, and its answer (the keys every command shares, read as this record's attributes).

    ``instructions``: warp instructions executed with a lane on, as Nsight Compute's SASS-level
    counters count them (``instructions_reached``: warps whose control reached it, where more;
    ``instructions_predicated``: warps that also branched around it, which execute it predicated
    off if ptxas turns the branch into predication, as the source view then counts them);
    ``wavefronts``/``ideal`` summed over them; ``verdict`` ``proved`` (every instance at its ideal),
    ``refuted`` (``conflict`` names one) or ``unknown`` (``reason``); ``rests_on`` what the count
    rests on (``measured``, ``assumed``, ``not modelled``), or how the SASS runs it where no rule
    counts that (``SASS not modelled``, ``SASS loop``, ``SASS loads and stores``, ``SASS
    atomics``); ``family`` ``atom32`` is a shared atomic of a measured form (counted where its SASS
    is that form); ``engines``/``proof``: the second engine's answer where the addresses make a
    layout (:mod:`bankproof.verifier.kernel.crosscheck`)."""

    ptx_line: int
    opcode: str
    family: str
    location: SourceLine | None
    inlined_from: SourceLine | None
    answer: AccessAnswer = embedded()
    instructions_reached: int | None = optional()
    instructions_predicated: int | None = optional()
    fix: str | None = optional()
    bad_direction: str | None = optional()
    wavefronts_range: tuple[int, int] | None = optional()  # where ``wavefronts`` is unknown: its bounds

    def with_answer(self, **changes) -> InstructionReport:
        """This report with its answer's fields changed."""
        return replace(self, answer=replace(self.answer, **changes))


@dataclass(frozen=True)
class LineTotal(Result):
    """One source line's shared-memory instructions: per op kind (``ld``, ``st``, ``ldsm``,
    ``stsm``, ``ldgsts``, ``tma``, ``mma``, ``atomic``, ``mbarrier``) warp instructions executed and
    wavefronts (``None``: unknown)."""

    location: SourceLine | None
    kinds: tuple[str, ...]
    instructions: int | None
    wavefronts: int | None
    ideal: int | None
    verdict: str


@dataclass(frozen=True)
class KindTotal(Result):
    """A kernel's total of one op kind, as Nsight Compute's SASS-level counters count it."""

    kind: str
    instructions: int | None
    wavefronts: int | None
    ideal: int | None
    counters: tuple[str, ...]
    range: tuple[int, int] | None = optional()  # where ``wavefronts`` is unknown: its bounds


@dataclass(frozen=True)
class DescriptorCheck(Result):
    """A wgmma operand's descriptor read against the TMA box that wrote its tile (``bankproof
    agree``'s rules and engines): ``verdict`` ``proved`` (every element read where the box put it),
    ``refuted`` (``mismatch`` names the first element) or ``unknown`` (``reason``: no tensor map
    given, no box under the descriptor's start, a value not known)."""

    ptx_line: int
    location: SourceLine | None
    operand: str
    descriptor: str
    decoded: str
    verdict: str
    tensor_map: str | None = optional()
    tile_base: int | None = optional()
    mismatch: str | None = optional()
    reason: str | None = optional()


@dataclass(frozen=True)
class LineMeasure(Result):
    """One source line and op class of a measured source view: Nsight Compute's warp instructions
    executed and wavefronts beside the analysis (``executed_low``..``executed_high``: with a lane on
    .. counting warps that may run it predicated off; ``predicted_wavefronts`` ``None`` where not
    modelled); ``agrees`` when both hold; ``modelled`` is False for a line the analysis has no
    instruction of (or one it names not modelled)."""

    file: str
    line: int
    kind: str
    executed: int
    wavefronts: int
    executed_low: int
    executed_high: int
    predicted_wavefronts: int | None
    modelled: bool
    agrees: bool
    note: str | None = optional()  # instructions with no source line in the PTX that ptxas placed here


@dataclass(frozen=True)
class KernelResult(Result):
    """A kernel's shared-memory account for one CTA of a launch: per instruction, per source line
    and per op kind; ``verdict`` ``proved`` (every modelled instruction at its ideal over every
    instance; what is not modelled, such as shared atomics or zero-fill cp.async.cg, is named per
    instruction and left out of the verdict and the totals), ``refuted`` (some instruction conflicts)
    or ``unknown`` (what could not be decided is named in ``unknown``: never a number in its place)."""

    schema: int
    source: str
    kernel: str
    arch: str
    launch: dict
    verdict: str
    instructions: tuple[InstructionReport, ...]
    lines: tuple[LineTotal, ...]
    totals: tuple[KindTotal, ...]
    unknown: tuple[str, ...]
    notes: tuple[str, ...]
    shared_symbols: dict
    steps: int
    descriptors: tuple[DescriptorCheck, ...] = ()
    measured: tuple[LineMeasure, ...] = ()  # a measured source view joined line by line (--ncu)

    @property
    def exit_code(self) -> int:
        return {"proved": 0, "refuted": 1, "unknown": 3, "disagree": 4}[self.verdict]
