"""The Triton wing's own results: ``ScanResult`` (``bankproof triton scan``) and ``CorpusResult``
(``bankproof triton corpus``), frozen like every result; ``to_json()`` is the CLI's ``--json``.

>>> ScanResult(schema=1, reports=()).worse
False
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bankproof.verifier.results import Result
from bankproof.verifier.triton.ledger import unchecked
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.scan import scan_unchecked


@dataclass(frozen=True)
class ScanResult(Result):
    """``bankproof triton scan``: per file, every shared buffer and access (see ``triton/scan.py``)."""

    schema: int
    reports: tuple[dict, ...]

    @property
    def worse(self) -> bool:
        """Whether some buffer costs more than its optimum."""
        return any(b["gap"] for rep in self.reports for b in rep["buffers"])

    @property
    def unchecked(self) -> list[str]:
        """What the scan could not check: accesses not analysed, optima unknown (by file)."""
        return [f"{rep['file']}: {u}" for rep in self.reports for u in scan_unchecked(rep)] + [
            f"{rep['file']}: {u}" for rep in self.reports if "ledger" in rep for u in unchecked(rep["ledger"])
        ]

    @property
    def lowering(self) -> list[str]:
        """Where the PTX and the count disagree: instructions no op owns, counts that differ."""
        out = []
        for rep in self.reports:
            led = rep.get("ledger") or LedgerReport()
            out += [f"{rep['file']}: {d}" for d in led.disagreements]
            out += [f"{rep['file']}: unattributed: {u}" for u in led.unattributed]
            out += [f"{rep['file']}: {m}" for m in rep.get("descriptors", {}).get("mismatches", [])]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"


@dataclass(frozen=True)
class CorpusResult(Result):
    """``bankproof triton corpus``: compiled entries, regressions against a baseline, gaps."""

    schema: int
    entries: tuple[dict, ...]
    worse: tuple[str, ...]
    gaps: tuple[str, ...]
    unchecked: tuple[str, ...] = ()

    @property
    def lowering(self) -> list[str]:
        """Accesses whose instructions differ from Triton's PTX."""
        return [f"{e['config']}@{e['arch']} {p}" for e in self.entries for p in e.get("lowering", [])]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"
