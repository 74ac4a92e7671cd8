"""Every result the API returns: frozen dataclasses whose ``to_json()`` is the CLI's ``--json``.

A field marked :func:`optional` is left out of the JSON when it is ``None`` (the schema's optional
keys); a field marked :func:`hidden` carries a Python value (a parsed layout, a matrix) that the
JSON does not have. Sequences are tuples; they print as JSON arrays.

>>> r = Proof(status="proved", engine="z3", seconds=0.01)
>>> r.to_json()
'{"status": "proved", "engine": "z3", "seconds": 0.01}\\n'
>>> Proof(status="unknown", engine="z3", seconds=10.0, reason="time limit").to_dict()["reason"]
'time limit'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

EXIT = {"proved": 0, "refuted": 1, "unknown": 3, "disagree": 4}


def optional(default: Any = None) -> Any:
    """A field left out of the JSON while it is ``None``."""
    return field(default=default, metadata={"optional": True})


def hidden(default: Any = None) -> Any:
    """A field that is not part of the JSON (a Python object for API users and renderers)."""
    return field(default=default, metadata={"hidden": True}, repr=False, compare=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Result:
    """JSON for a frozen result dataclass (mixin), and its other faces: ``to_text()`` (what the
    command prints), ``_repr_html_`` (notebooks) and ``_repr_svg_`` (bank maps). The renderers
    sit above the results in the import graph, so they fill :attr:`DISPLAY` themselves
    (``bankproof.verifier.render.display``, imported by ``bankproof`` on first use)."""

    DISPLAY: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def _display(self, face: str) -> Any:
        if not Result.DISPLAY:
            raise RuntimeError("no renderers are wired: import bankproof first")
        return Result.DISPLAY[face](self)

    def to_text(self) -> str:
        """What the ``bankproof`` command prints for this result."""
        return self._display("text")

    def _repr_html_(self) -> str:
        return self._display("html")

    def _repr_svg_(self) -> str | None:
        return self._display("svg")

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("hidden") or (f.metadata.get("optional") and value is None):
                continue
            out[f.metadata.get("key", f.name)] = _plain(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict()) + "\n"


# --- verify ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counterexample(Result):
    """Two lanes of one phase that reach one bank at different words."""

    lanes: tuple[int, int]
    block: int
    warp: int
    instruction: int
    register: int
    coords: tuple[dict, ...]
    byte_addresses: tuple[int, int]
    bank: int | None
    phase: int
    wavefronts: int
    ideal: int
    reproducer: str

    @property
    def command(self) -> str:
        """The shell line that replays this instruction through ``bankproof wavefronts``."""
        return f"echo '{self.reproducer}' | bankproof wavefronts --input -"


@dataclass(frozen=True)
class Certificate(Result):
    """Z3's exact-count certificate: ``k`` words on one bank are reachable, ``k + 1`` are not."""

    words_per_bank: int
    status: str
    seconds: float
    witness_lanes: tuple | None = optional()


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
class AccessResult(Result):
    """The wavefronts of one access, every engine's answer, and a counterexample when it conflicts."""

    name: str
    kind: str
    instr: str
    vector: int
    instructions: int
    wavefronts: int | None
    ideal_wavefronts: int
    max_wavefronts_per_instruction: int | None
    conflict_free: bool | None
    hardware_model: str
    engines: dict[str, EngineResult]
    proof: Proof
    counterexample: Counterexample | None
    lower_bound_wavefronts: int | None = optional()
    hardware_rule: str | None = optional()  # lane groups: the published rule and its source

    @property
    def state(self) -> str:
        """``conflict-free``, ``N-way conflict``, or the proof status when undecided.

        The conflict degree is the costliest instruction's wavefronts over its ideal."""
        if self.proof.status not in ("proved", "refuted"):
            return self.proof.status
        if self.conflict_free:
            return "conflict-free"
        per = self.ideal_wavefronts // max(1, self.instructions)
        return f"{(self.max_wavefronts_per_instruction or 0) // max(1, per)}-way conflict"


@dataclass(frozen=True)
class MemoryRef(Result):
    notation: str
    text: str
    warnings: tuple[str, ...] | None = optional()


@dataclass(frozen=True)
class VerifyResult(Result):
    """``bankproof verify``: every access of a problem, decided by the engines (schema 1)."""

    schema: int
    spec: str
    arch: str
    dtype: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    memory: MemoryRef
    verdict: str
    accesses: tuple[AccessResult, ...]

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
class SynthResult(VerifyResult):
    """``bankproof synth``: the verify report of the synthesized layout, plus the synthesis."""

    synth: SynthInfo | None = optional()
    layout: Any = hidden()

    @property
    def notations(self) -> dict[str, str]:
        """The synthesized layout in every notation that expresses it."""
        return dict(self.synth.memory["notations"]) if self.synth else {}


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
    layout: Any = hidden()


@dataclass(frozen=True)
class WavefrontsResult(Result):
    """The hardware model's answer for one warp instruction."""

    wavefronts: int | None
    ideal: int
    groups: tuple | None
    status: str

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
