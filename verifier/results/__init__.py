"""Every result the API returns: frozen dataclasses whose ``to_json()`` is the CLI's ``--json``
(the floor above the engines' inputs and below everything that shows them). This module only
re-exports: the base (``Result``, :func:`optional`, :func:`hidden`) is in ``base``, verify and
synth in ``verify``, the other commands in ``commands``.

>>> Proof(status="proved", engine="z3", seconds=0.01).to_json()
'{"status": "proved", "engine": "z3", "seconds": 0.01}\\n'
"""

from bankproof.verifier.results.answer import (
    KEYS,
    AccessAnswer,
    Certificate,
    Conflict,
    EngineResult,
    Proof,
)
from bankproof.verifier.results.base import EXIT, SCHEMA, FrozenMap, Result, embedded, hidden, optional, plain
from bankproof.verifier.results.commands import (
    ConversionProof,
    ConvertResult,
    ExplainResult,
    GpuResult,
    GpuSide,
    LayoutResult,
    PageData,
    SharedRoundTrip,
    ShowResult,
    ShufflePlanResult,
    ShuffleRound,
    WavefrontsResult,
)
from bankproof.verifier.results.engines import AgreeResult, Element, EngineAnswer
from bankproof.verifier.results.verify import (
    AccessResult,
    ConstrainedSynthesis,
    FamilyMember,
    MemoryRef,
    Optimality,
    SmtSynthesis,
    StatusTime,
    SynthInfo,
    SynthResult,
    UnreadResult,
    VerifyResult,
)

__all__ = [
    "EXIT", "KEYS", "SCHEMA", "AccessAnswer", "AccessResult", "FrozenMap", "AgreeResult", "Certificate",
    "ConversionProof",
    "ConvertResult",
    "ConstrainedSynthesis", "Conflict",
    "Element", "EngineAnswer", "FamilyMember",
    "EngineResult", "ExplainResult", "GpuResult", "GpuSide", "LayoutResult", "MemoryRef", "Optimality",
    "PageData", "Proof", "Result", "SharedRoundTrip", "ShowResult", "ShufflePlanResult", "ShuffleRound",
    "SmtSynthesis", "StatusTime", "SynthInfo", "SynthResult", "UnreadResult", "VerifyResult",
    "WavefrontsResult",
    "embedded", "hidden", "optional", "plain",
]  # fmt: skip
