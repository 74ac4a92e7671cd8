"""The results of ``explain``, ``convert``, ``layout``, ``wavefronts``, ``show`` and ``gpu``.

>>> WavefrontsResult(wavefronts=1, ideal=1, groups=((0,),), rests_on="measured").to_dict()["rests_on"]
'measured'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bankproof.verifier.results.base import EXIT, Result, hidden, optional

# --- explain --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExplainResult(Result):
    """``bankproof explain``: the §5.4 construction's sets, bits named after the dims."""

    schema: int
    spec: str
    writer: str
    reader: str
    bits: tuple[str, ...]
    vectorization: tuple[str, ...]
    bank_bits: int
    segment_bits: int
    sets: dict[str, tuple[str, ...]]
    conflict_free: bool
    wavefronts_per_instruction: dict[str, int]
    formula: str | None
    swizzle: Any = hidden()  # the models.swizzle.Construction with every set as packed vectors
    problem: Any = hidden()  # the spec it was built for
    writer_kind: str = hidden("store")
    reader_kind: str = hidden("load")
    matrix: Any = hidden()  # the constructed layout's matrix, columns by role
    notations: dict = hidden(None)  # the constructed layout in every notation that expresses it


# --- convert --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversionProof(Result):
    status: str
    engine: str
    seconds: float
    reason: str | None = optional()
    counterexample: dict | None = optional()


@dataclass(frozen=True)
class ShuffleRound(Result):
    src: tuple[int, ...]
    send_register: tuple[int, ...]
    recv_register: tuple[int, ...]


@dataclass(frozen=True)
class ShufflePlanResult(Result):
    """The §5.4 warp-shuffle plan, or why there is none."""

    possible: bool
    reason: str | None = optional()
    vectorization: tuple[str, ...] | None = optional()
    inter: tuple[str, ...] | None = field(default=None, metadata={"optional": True, "key": "I"})
    e: tuple[str, ...] | None = field(default=None, metadata={"optional": True, "key": "E"})
    f: tuple[str, ...] | None = field(default=None, metadata={"optional": True, "key": "F"})
    g: tuple[str, ...] | None = field(default=None, metadata={"optional": True, "key": "G"})
    r: tuple[str, ...] | None = field(default=None, metadata={"optional": True, "key": "R"})
    rounds: tuple[ShuffleRound, ...] | None = optional()
    shuffles_per_round: int | None = optional()
    elements_per_shuffle_lane: int | None = optional()
    proof: ConversionProof | None = optional()


@dataclass(frozen=True)
class SharedRoundTrip(Result):
    memory: str
    formula: str
    proof: ConversionProof


@dataclass(frozen=True)
class ConvertResult(Result):
    """``bankproof convert``: the source -> destination conversion, each plan proved by Z3."""

    schema: int
    spec: str
    source: str
    destination: str
    shuffle: ShufflePlanResult
    shared_memory: SharedRoundTrip
    verdict: str
    shape: tuple[int, ...] = hidden(())
    dtype: str = hidden("")

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]


# --- layout, wavefronts, show ---------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutResult(Result):
    """``bankproof layout``: a parsed layout's kind, validity, bases and equivalent notations."""

    schema: int
    notation: str
    kind: str
    in_dims: dict
    out_dims: dict
    dim_names: tuple[str, ...]
    linear: bool
    padding: tuple | None = optional()
    span_elements: int | None = optional()
    valid: bool = True
    violations: tuple[str, ...] = ()
    injective: bool = True
    surjective: bool = True
    broadcast: dict | None = optional()
    contiguous_registers: int | None = optional()
    notations: dict | None = optional()
    dtype: str | None = optional()
    banks: tuple | None = optional()
    warnings: tuple[str, ...] | None = optional()  # traps in the input (CuTe units)
    notes: tuple[str, ...] | None = optional()  # what was printed back in another form, and why it is equal
    layout: Any = hidden()


@dataclass(frozen=True)
class WavefrontsResult(Result):
    """The hardware model's answer for one warp instruction (``rests_on``: what the count rests on,
    as in every access's answer)."""

    wavefronts: int | None
    ideal: int
    groups: tuple | None
    rests_on: str

    def to_json(self) -> str:
        """One JSONL line, as ``bankproof wavefronts`` prints it."""
        return json.dumps(self.to_dict(), separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class ShowResult(Result):
    """``bankproof show``: one instruction's wavefront groups, ``{bank: {word: [lanes]}}`` each."""

    schema: int
    spec: str
    access: str
    kind: str
    instr: str
    instruction: int
    instructions: int
    groups: tuple[dict, ...]
    unknown: str | None = optional()  # why this arch's model cannot count it (the groups are sm90's phases)
    banks: int = 32  # the arch's banks (64 on gfx950): the columns of the scope
    model: str = "phases"  # "lane groups": each group is a group of lanes served apart (a wave64 LDS)
    matrices: tuple = hidden(())


@dataclass(frozen=True)
class PageData:
    """What the HTML page shows beyond a verify result (not JSON): per access, the bank scope of
    its counterexample's instruction (or why there is none) and its matrix; the memory layout's
    matrix; the §5.4 construction for the writer and reader (or why it does not apply) and the
    constructed layout in every notation."""

    scopes: dict[str, Any]  # access name -> ShowResult, or the reason text
    access_matrices: dict[str, Any]
    memory_matrix: Any
    explanation: Any  # ExplainResult, or the reason text
    notations: dict[str, str]


@dataclass(frozen=True)
class GpuSide(Result):
    instr: str
    predicted: int
    measured: int | None


@dataclass(frozen=True)
class GpuResult(Result):
    """``bankproof gpu``: data checked on the device, wavefronts measured next to the prediction."""

    schema: int
    spec: str
    runs: int
    wrong_elements: int
    store: GpuSide
    load: GpuSide

    @property
    def ok(self) -> bool:
        return self.wrong_elements == 0 and all(
            s.measured is None or s.measured == s.predicted for s in (self.store, self.load)
        )
