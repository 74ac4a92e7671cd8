"""``bankproof triton scan``: every shared buffer of TTGIR text, counted, with its optimum."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from bankproof.models.errors import InputError
from bankproof.verifier.api.problem import engines_arg, timeout_arg
from bankproof.verifier.kernel.buffers import checked as checked_buffers
from bankproof.verifier.results import SCHEMA
from bankproof.verifier.triton import pipeline
from bankproof.verifier.triton.results import ScanResult
from bankproof.verifier.triton.source import read_source


def scan_ttgir(
    text: str | Sequence[str],
    *,
    path: str | Sequence[str] = "<ttgir>",
    ptx: str | Sequence[str] | None = None,
    args: Mapping[str, int] | None = None,
    engines: str | Sequence[str] | None = None,
    timeout: float = 10.0,
    buffers: Mapping[str, object] | None = None,
) -> ScanResult:
    """Every shared buffer of TTGIR text (or several texts), each access's exact wavefronts, the
    optimum and a better layout when there is one (``bankproof triton scan``). With ``ptx`` (the
    same compile's PTX, one per text) each report also gets the whole-kernel ``ledger``: every
    PTX shared-memory instruction owned by a TTGIR op and counted; ``args`` (kernel arguments by
    name, ``program_id_x``...) resolve loop trip counts. ``engines`` (as ``verify`` takes them:
    ``all``, ``enum``, ``algebra``, ``z3``): each access also answered by those engines, within
    ``timeout`` seconds per solver query; by default each is counted only. ``buffers`` (with
    ``ptx``): what pointer arguments point to, by argument name or position (numpy arrays, torch
    tensors, bytes; ``None`` a null pointer), read where the launch's run loads them.

    >>> from pathlib import Path
    >>> sample = (Path(__file__).parents[1] / "triton" / "sample.ttgir").read_text()
    >>> r = scan_ttgir(sample, path="sample.ttgir")
    >>> [(b.wavefronts, b.optimal_wavefronts) for b in r.reports[0].buffers], r.worse
    ([(272, 32)], True)
    """
    texts = [text] if isinstance(text, str) else list(text) if isinstance(text, (list, tuple)) else [None]
    paths = (
        [path] * len(texts)
        if isinstance(path, str)
        else list(path)
        if isinstance(path, (list, tuple))
        else []
    )
    if len(paths) != len(texts) or not all(isinstance(t, str) for t in texts + paths):
        raise InputError("scan_ttgir", "text", "must be TTGIR text or a list of texts (one path each)")
    ptxs: list = [None] * len(texts)
    if ptx is not None:
        ptxs = [ptx] if isinstance(ptx, str) else list(ptx) if isinstance(ptx, (list, tuple)) else []
        if len(ptxs) != len(texts) or not all(isinstance(x, str) for x in ptxs):
            raise InputError("scan_ttgir", "ptx", "must be PTX text, one per TTGIR text")
    if args is not None:
        if not isinstance(args, Mapping) or not all(
            isinstance(k, str) and type(v) is int for k, v in args.items()
        ):
            raise InputError("scan_ttgir", "args", "must map argument names to integers", args)
        if ptx is None:
            raise InputError("scan_ttgir", "args", "needs ptx (trip counts are the ledger's)")
        args = dict(args)
    bufs = dict(checked_buffers(buffers))
    if bufs and ptx is None:
        raise InputError("scan_ttgir", "buffers", "needs ptx (the launch's run reads them)")
    chosen = () if engines is None else engines_arg(engines, "scan_ttgir")
    seconds = timeout_arg(timeout, "scan_ttgir")
    reports = []
    for t, p, x in zip(texts, paths, ptxs, strict=True):
        got = pipeline.analyse(
            read_source(t, p, x), args, None, chosen, seconds, bufs
        )  # each compile read once, analysed once
        rep = got.report
        if x is not None:
            if got.ledger is None:
                raise InputError("scan_ttgir", "ptx", f"cannot be read as a kernel ({got.ledger_error})")
            # with the MMA descriptors against their nvmma_shared operands, where there are any
            rep = replace(rep, ledger=got.ledger, descriptors=got.descriptors)
        reports.append(rep)
    return ScanResult(SCHEMA, tuple(reports))


__all__ = ["scan_ttgir"]
