"""``bankproof triton scan`` and ``bankproof triton corpus``: read the files, call the Triton
wing, write the rendering to ``out`` and the findings to ``err``, and return the exit code.

>>> _kernel_args(["K=4096", "program_id_x=0x2"])
{'K': 4096, 'program_id_x': 2}
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import TEXT_BYTES, read_text
from bankproof.verifier import api
from bankproof.verifier.api.kernel import read_specs
from bankproof.verifier.cli.commands import check_writable, write_output
from bankproof.verifier.render import sarif as sarif_render
from bankproof.verifier.render import scan as scan_render
from bankproof.verifier.results import EXIT, SCHEMA


def _read_ttgir(path: str) -> str:
    return read_text(path, TEXT_BYTES, "triton scan", "FILE")


def _kernel_args(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            raise InputError("triton scan", "--arg", "must be NAME=INTEGER", item) from None
        if not name.strip().isidentifier():
            raise InputError("triton scan", "--arg", "must be NAME=INTEGER", item)
    return out


def scan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.ptx is not None and len(args.ptx) != len(args.files):
        raise InputError("triton scan", "--ptx", "must be given once per TTGIR file", len(args.ptx))
    if args.arg and args.ptx is None:
        raise InputError("triton scan", "--arg", "needs --ptx (trip counts are the ledger's)")
    if args.buffer and args.ptx is None:
        raise InputError("triton scan", "--buffer", "needs --ptx (the launch's run reads it)")
    ptx = [_read_ttgir(p) for p in args.ptx] if args.ptx else None
    result = api.scan_ttgir(
        [_read_ttgir(p) for p in args.files],
        path=list(args.files),
        ptx=ptx,
        args=_kernel_args(args.arg) or None,
        engines=args.engine,
        timeout=args.timeout,
        buffers=read_specs(args.buffer) or None,
    )
    return _emit(result, args, out, err)


def _emit(result, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A scan's (or a replay's) report in the format asked for, and the gate's exit code."""
    if args.sarif:
        out.write(json.dumps(sarif_render.to_sarif(result, _root(args)), indent=1) + "\n")
    else:
        out.write(result.to_json() if args.json else scan_render.to_text(result))
    for d in result.lowering:
        err.write(f"instructions differ from Triton's PTX: {d}\n")
    if result.lowering:
        return EXIT["disagree"]
    # the gate's rule, the corpus's too: a layout that alone does better fails (any gap: --require-optimal)
    failing = [(rep.file, b) for rep in result.reports for b in rep.buffers
               if b.layout_gap or (args.require_optimal and b.gap)]  # fmt: skip
    for file, b in failing:
        best = b.wavefronts - b.layout_gap if b.layout_gap else b.optimal_wavefronts
        err.write(f"above its optimum: {file} {b.shown}: {b.wavefronts} wavefronts, {best} possible\n")
    return _gate(bool(failing), result.unchecked, args.allow_unknown, err)


def replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``triton replay DIR``: a captured program's launches, worst first."""
    from bankproof.verifier.api.replay import replay as run

    return _emit(run(args.dir), args, out, err)


def capture(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``triton capture DIR -- CMD``: CMD run with the capture installed at its start."""
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from bankproof.verifier.triton.capture import ENV

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise InputError(
            "triton capture", "CMD", "is missing: bankproof triton capture DIR -- python train.py"
        )
    folder = Path(args.dir).resolve()
    with tempfile.TemporaryDirectory() as shim:
        (Path(shim) / "sitecustomize.py").write_text(
            "from bankproof.verifier.triton.capture import install_from_env\ninstall_from_env()\n"
        )
        path = os.pathsep.join(x for x in (shim, os.environ.get("PYTHONPATH", "")) if x)
        try:
            code = subprocess.call(cmd, env={**os.environ, ENV: str(folder), "PYTHONPATH": path})
        except OSError as e:
            raise InputError("triton capture", "CMD", f"cannot be run ({type(e).__name__})", cmd[0]) from None
    err.write(f"captured into {folder} (bankproof triton replay {folder})\n")
    return code


def _gate(worse: bool, unchecked: list[str] | tuple[str, ...], allow: bool, err: TextIO) -> int:
    """1 when something costs more than it should; else 3 when something was not checked (a CI
    gate must not pass on nothing) unless allowed; else 0. What was not checked goes to stderr."""
    for u in unchecked:
        err.write(f"not checked: {u}\n")
    if worse:
        return 1
    return EXIT["unknown"] if unchecked and not allow else 0


def corpus(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.arch is None:
        archs = [t.arch for t in target.TARGETS.values() if t.corpus_default]
    else:
        archs = [a.strip() for a in args.arch.split(",") if a.strip()]
        if not archs:
            raise InputError("triton corpus", "--arch", "names no arch (e.g. sm90 or sm80,sm90)", args.arch)
    if args.update_baseline and not args.baseline:
        raise InputError("triton corpus", "--update-baseline", "needs --baseline FILE")
    if args.update_baseline:
        check_writable("triton corpus", "--baseline", args.baseline, (args.kernels,))
    if not 0 < args.compile_timeout <= 86400:
        raise InputError(
            "triton corpus", "--compile-timeout", "must be between 0 and 86400 seconds", args.compile_timeout
        )
    if not 0 <= args.workers <= 4096:
        raise InputError(
            "triton corpus", "--workers", "must be 0 (one per CPU) to 4096 processes", args.workers
        )
    if args.address and args.engine != "ray":
        raise InputError("triton corpus", "--address", "is for --engine ray", args.address)
    if not 0 <= args.expand <= 1_000_000:
        raise InputError("triton corpus", "--expand", "must be 0 to 1000000 configurations", args.expand)
    from bankproof.verifier.api.corpus import corpus as run
    from bankproof.verifier.api.corpus import updated_baseline

    result = run(
        archs, args.kernels, args.baseline, args.workers, compare_baseline=not args.update_baseline,
        limit_s=args.compile_timeout, progress=Progress(err, "compiled"), engine=args.engine,
        address=args.address, results_dir=args.results, expand=args.expand, seed=args.seed,
    )  # fmt: skip
    if args.sarif:
        out.write(json.dumps(sarif_render.corpus_sarif(result, _root(args)), indent=1) + "\n")
    else:
        out.write(result.to_json() if args.json else scan_render.corpus_text(result, archs, args.verbose))
    if args.update_baseline:
        flat, kept = updated_baseline(args.baseline, result)
        text = json.dumps({"schema": 1, "accesses": dict(flat)}, indent=1, sort_keys=True) + "\n"
        write_output("triton corpus", "--baseline", args.baseline, text, updates=True)
        mine = len(flat) - kept
        err.write(f"baseline: {mine} accesses of this run's compiles, {kept} kept -> {args.baseline}\n")
    for r in result.recomputed or ():
        err.write(f"results store: an entry was not trusted and was computed again: {r}\n")
    for w in result.worse:
        err.write(f"worse than baseline: {w}\n")
    for r in result.removed:  # not a regression: the compile no longer makes that access
        err.write(f"removed since the baseline: {r}\n")
    for g in result.layout_gaps:
        err.write(f"another layout does better: {g}\n")
    if args.require_optimal:
        for g in result.gaps:
            err.write(f"not optimal: {g}\n")
    for d in result.lowering:  # the scan's instructions are not Triton's: its counts may be wrong
        err.write(f"instructions differ from Triton's PTX: {d}\n")
    if result.lowering:
        code = EXIT["disagree"]
    else:
        worse = bool(result.worse or result.layout_gaps or (args.require_optimal and result.gaps))
        code = _gate(worse, result.unchecked, args.allow_unknown, err)
    err.write(scan_render.corpus_summary(result, code) + "\n")
    return code


class Progress:
    """``progress(done, total)`` on ``err``: a bar redrawn in place on a terminal, a plain line
    per step otherwise (logs, CI).

    >>> import io
    >>> s = io.StringIO(); p = Progress(s, "compiled"); p(1, 2); p(2, 2); s.getvalue()
    'compiled 1/2\\ncompiled 2/2\\n'
    """

    def __init__(self, err: TextIO, what: str):
        self.err, self.what = err, what
        self.tty = hasattr(err, "isatty") and err.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.tty:
            self.err.write(f"{self.what} {done}/{total}\n")
        else:
            filled = 30 * done // max(total, 1)
            end = "\n" if done == total else ""
            self.err.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {self.what}{end}")
        self.err.flush()


def profile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``bankproof triton profile``: the ledger of the compile given, joined with the launch's
    Nsight Compute source page, line by line."""
    from bankproof.verifier.api.profile import profile as run
    from bankproof.verifier.triton import profile as prof

    if args.ctas < 1 or args.ctas > 1 << 31:
        raise InputError("triton profile", "--ctas", "must be a positive number of CTAs", args.ctas)
    ttgir, ptx = _read_ttgir(args.ttgir), _read_ttgir(args.ptx)
    export = read_text(args.ncu, TEXT_BYTES, "triton profile", "--ncu")
    try:
        kernel, result = run(ttgir, ptx, export, _kernel_args(args.arg) or None, args.ctas, args.ttgir)
    except InputError as e:
        if e.field == "ptx":
            raise InputError("triton profile", "--ptx", e.problem) from None
        raise
    if args.json:
        lines = [r.to_dict() for r in result]
        out.write(json.dumps({"schema": SCHEMA, "kernel": kernel, "lines": lines}, indent=1) + "\n")
    else:
        out.write(prof.to_text(result, kernel))
    return EXIT["disagree"] if any(r.modelled and not r.agrees for r in result) else 0


def _root(args: argparse.Namespace) -> str | None:
    """``--sarif-root``: the checkout SARIF locations are made relative to (absolute, resolved)."""
    from pathlib import Path

    if args.sarif_root is None:
        return None
    root = Path(args.sarif_root)
    if not root.is_dir():
        why = "must be a folder (the repository's checkout)"
        raise InputError("triton", "--sarif-root", why, args.sarif_root)
    return root.resolve().as_posix()
