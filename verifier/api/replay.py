"""``bankproof triton replay DIR`` and ``bankproof.capture(DIR)``: a real program's Triton launches
captured (:mod:`bankproof.verifier.triton.capture`) and answered on a machine without a GPU, each
launch's compile scanned with the launch's own integers, grid and buffers, worst first.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "capture.json").write_text(json.dumps({"schema": 1, "compiles": {}, "launches": []}))
>>> replay(d).reports
()
"""

from __future__ import annotations

import os
from dataclasses import replace

from bankproof.models.errors import InputError
from bankproof.verifier.results import SCHEMA
from bankproof.verifier.triton import pipeline
from bankproof.verifier.triton.capture import capture
from bankproof.verifier.triton.launch_totals import launch_totals
from bankproof.verifier.triton.replay import launch_args, read_capture, texts
from bankproof.verifier.triton.results import ScanResult
from bankproof.verifier.triton.source import read_source


def _excess(rep) -> int:
    """Wavefronts above the ideal per CTA (the ledger's, else the scan's buffers')."""
    led = rep.ledger
    if led is not None and led.totals:
        return sum(
            (t.wavefronts or 0) - (t.ideal or 0)
            for t in led.totals.values()
            if getattr(t, "ideal", None) is not None
        )
    return sum(b.wavefronts - b.optimal_wavefronts for b in rep.buffers)


def replay(folder: str | os.PathLike) -> ScanResult:
    """Every captured launch's report (see the module docstring), worst first; each report's
    ``file`` names the kernel and the launch."""
    launches, _ = read_capture(folder)
    reports = []
    for la in launches:
        ttgir, ptx = texts(la)
        src = read_source(ttgir, la.label, ptx)
        args = launch_args(la) if ptx else None
        got = pipeline.analyse(src, args, None, (), 10.0, dict(la.buffers) or None)
        rep = got.report
        if ptx is not None:
            if got.ledger is None:
                raise InputError(
                    "triton replay", "compiles.ptx", f"{la.label}: cannot be read ({got.ledger_error})"
                )
            led = got.ledger
            if args is not None:
                whole = launch_totals(rep, src, la.grid, args, dict(la.buffers) or None, led)
                led = replace(led, launch=whole)
            rep = replace(rep, ledger=led, descriptors=got.descriptors)
        reports.append(rep)
    reports.sort(key=_excess, reverse=True)
    return ScanResult(SCHEMA, tuple(reports))


__all__ = ["capture", "replay"]
