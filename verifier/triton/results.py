"""The Triton wing's own results: ``ScanResult`` (``bankproof triton scan``) and ``CorpusResult``
(``bankproof triton corpus``), frozen like every result; ``to_json()`` is the CLI's ``--json``.

>>> ScanResult(schema=1, reports=()).worse
False
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bankproof.verifier.results import Result, optional
from bankproof.verifier.triton.corpus_records import CorpusEntry
from bankproof.verifier.triton.ledger import unchecked
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.scan import scan_unchecked
from bankproof.verifier.triton.scan_records import ScanReport


@dataclass(frozen=True)
class ScanResult(Result):
    """``bankproof triton scan``: per file, every shared buffer and access (see ``triton/scan.py``)."""

    schema: int
    reports: tuple[ScanReport, ...]

    @property
    def worse(self) -> bool:
        """Whether some buffer costs more than its optimum (over layouts and instructions)."""
        return any(b.gap for rep in self.reports for b in rep.buffers)

    @property
    def unchecked(self) -> list[str]:
        """What the scan could not check: accesses not analysed, optima unknown (by file)."""
        return [f"{rep.file}: {u}" for rep in self.reports for u in scan_unchecked(rep)] + [
            f"{rep.file}: {u}" for rep in self.reports if rep.ledger for u in unchecked(rep.ledger)
        ]

    @property
    def lowering(self) -> list[str]:
        """Where the PTX and the count disagree: instructions no op owns, counts that differ."""
        out = []
        for rep in self.reports:
            led = rep.ledger or LedgerReport()
            out += [f"{rep.file}: {d}" for d in led.disagreements]
            out += [f"{rep.file}: unattributed: {u}" for u in led.unattributed]
            marks = (rep.descriptors.mismatches or ()) if rep.descriptors else ()
            out += [f"{rep.file}: {m}" for m in marks]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"


@dataclass(frozen=True)
class CorpusResult(Result):
    """``bankproof triton corpus``: compiled entries, regressions against a baseline, gaps."""

    schema: int
    entries: tuple[CorpusEntry, ...]
    worse: tuple[str, ...]
    gaps: tuple[str, ...]
    unchecked: tuple[str, ...] = ()
    recomputed: tuple[str, ...] | None = optional()  # stored entries not trusted (with --results)
    compared: bool = False  # a baseline was given and compared with
    removed: tuple[str, ...] = ()  # accesses the baseline has and this run's compiles no longer make
    layout_gaps: tuple[str, ...] = ()  # buffers another shared layout alone would make cheaper

    @property
    def lowering(self) -> list[str]:
        """Accesses whose instructions differ from Triton's PTX."""
        return [f"{e.name} {p}" for e in self.entries for p in e.lowering or ()]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"
