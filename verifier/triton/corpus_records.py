"""One corpus result as a frozen record: a (configuration, arch) compile and what the wing said of
it, or why it did not compile. ``to_dict()`` is its JSON (the corpus's ``--json`` entries and the
results store's files); :func:`read_entry` reads a stored one back, every field checked.

>>> e = CorpusEntry(config="k", arch="sm90", error="compile did not finish within 300 s")
>>> e.to_dict()
{'config': 'k', 'arch': 'sm90', 'error': 'compile did not finish within 300 s'}
>>> read_entry(e.to_dict()) == e, e.compiled
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.verifier.results import Result, optional
from bankproof.verifier.results.decode import decode
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.scan_records import DescriptorSummary, ScanReport


@dataclass(frozen=True, kw_only=True)
class CorpusEntry(Result):
    """A compile's scan (``report``), its TTGIR, the PTX's shared instructions by kind
    (``ptx_counts``) and its cp.async cache modes by copy size, where the PTX and the count differ
    (``lowering``), the whole-kernel ``ledger`` and the MMA ``descriptors``; or ``error``."""

    config: str
    arch: str
    error: str | None = optional()
    report: ScanReport | None = optional()
    ttgir: str | None = optional()
    ptx_counts: Mapping[str, int] | None = optional()
    cp_async_modes: Mapping[str, tuple[str, ...]] | None = optional()
    lowering: tuple[str, ...] | None = optional()
    ledger: LedgerReport | None = optional()
    descriptors: DescriptorSummary | None = optional()

    @property
    def compiled(self) -> bool:
        return self.report is not None

    @property
    def name(self) -> str:
        """``config@arch``, as every corpus line names it."""
        return f"{self.config}@{self.arch}"


def read_entry(value: object, where: str = "stored entry") -> CorpusEntry:
    """A corpus entry read back from its JSON form (``InputError`` naming the field if it is not one)."""
    return decode(CorpusEntry, value, where)
