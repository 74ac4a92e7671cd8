"""The Triton wing's one analysis: a compile read once (:mod:`.source`), then the scan of its
TTGIR, and with its PTX the whole-kernel ledger and the MMA descriptor check, each from the same
reading. ``triton scan``, ``triton profile`` and the corpus all call :func:`analyse`.

>>> from pathlib import Path
>>> from bankproof.verifier.triton.source import read_source
>>> text = (Path(__file__).parent / "sample.ttgir").read_text()
>>> a = analyse(read_source(text, "sample.ttgir"))
>>> a.report.buffers[0].wavefronts, a.ledger is None
(272, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.models.errors import InputError
from bankproof.models.gcpause import without_gc
from bankproof.verifier.kernel.buffers import Buffer
from bankproof.verifier.triton import descriptors, ledger
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.scan import scan_module
from bankproof.verifier.triton.scan_records import DescriptorSummary, ScanReport
from bankproof.verifier.triton.source import TritonSource

ARCH_OF = {"cuda:90": "sm90", "cuda:100": "sm100"}


@dataclass(frozen=True)
class TritonAnalysis:
    """What the wing says of one compile: the scan's ``report``, the ``ledger`` (with PTX), and the
    descriptor check ``(counts, mismatches)`` (with PTX, on sm90/sm100 kernels with MMAs)."""

    source: TritonSource
    report: ScanReport
    ledger: LedgerReport | None = None
    descriptors: DescriptorSummary | None = None
    ledger_error: str | None = None


@without_gc
def analyse(
    source: TritonSource,
    args: dict[str, int] | None = None,
    arch: str | None = None,
    engines: tuple[str, ...] = (),
    timeout_s: float = 10.0,
    buffers: Mapping[str, Buffer] | None = None,
) -> TritonAnalysis:
    """The scan, and with PTX the ledger and the descriptor check, of one compile read once;
    ``arch`` (else the TTGIR's target) decides whether descriptors are checked; ``engines``: those
    each access's answer runs beside its count (none: counted only); ``buffers``: what pointer
    arguments point to (by argument name or position), read by the ledger's run of the PTX."""
    report = scan_module(source.shared_module(), source.path, engines, timeout_s)
    if source.ptx is None:
        return TritonAnalysis(source, report)
    led, error = None, None
    try:
        led = ledger.build(report, source.ttgir, source.ptx, args, source=source, buffers=buffers)
    except InputError:  # an argument the user gave (a trip count for no such loop): theirs to fix
        raise
    except (ValueError, KeyError, IndexError) as e:  # PTX the reader cannot read
        error = str(e)
    arch = arch or ARCH_OF.get(str(report.target))
    got = descriptors.summary(source.ttgir, source.ptx, arch, source=source) if arch else None
    return TritonAnalysis(source, report, led, got, error)
