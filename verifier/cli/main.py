"""The ``bankproof`` command: parse the arguments (standard library only, so ``--help`` and
``--version`` are fast), import the command's runner, run it on the given streams, and turn
errors into one line and an exit code.

Exit codes: 0 success / proved, 1 refuted, 2 usage or input error, 3 unknown (solver time
limit), 4 engines disagree, 70 internal error (a bug: please report it).

>>> import io
>>> main(["layout", "i", "--shape", "8"], io.StringIO(), io.StringIO())
0
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from bankproof.verifier.cli.parser import EXIT_INPUT, build_parser

EXIT_UNKNOWN = 3  # no verdict: the answer is unknown (here: the time limit ran out first)
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
# command -> (module, function) of its runner
RUNNERS = {
    **{c: ("bankproof.verifier.cli.commands", c)
       for c in ("layout", "wavefronts", "verify", "synth", "explain", "convert", "gpu", "show", "serve")},
    "descriptor": ("bankproof.verifier.cli.engines", "descriptor"),
    "agree": ("bankproof.verifier.cli.engines", "agree"),
    "kernel": ("bankproof.verifier.cli.kernel", "kernel"),
    "scan": ("bankproof.verifier.cli.triton", "scan"),
    "corpus": ("bankproof.verifier.cli.triton", "corpus"),
    "profile": ("bankproof.verifier.cli.triton", "profile"),
    "replay": ("bankproof.verifier.cli.triton", "replay"),
    "capture": ("bankproof.verifier.cli.triton", "capture"),
    "mcp": ("bankproof.verifier.cli.mcp", "mcp"),
}  # fmt: skip


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one ``bankproof`` command line; returns its exit code."""
    from bankproof.verifier.render.safe import SafeStream

    out, err = SafeStream(out or sys.stdout), SafeStream(err or sys.stderr)
    args = build_parser().parse_args(argv)
    from bankproof.models.files import begin_run

    begin_run()
    try:
        module, name = RUNNERS[args.run]
        code = getattr(importlib.import_module(module), name)(args, out, err)
    except Exception as e:  # noqa: BLE001 - sorted below; never show a user a traceback
        from bankproof.models.errors import InputError, TimeLimit

        if isinstance(e, TimeLimit):
            err.write(f"bankproof: unknown: {e} (the time limit, not a result)\n")
            return EXIT_UNKNOWN
        if isinstance(e, InputError):
            _error(args, str(_as_flags(e, args)), out, err)
            return EXIT_INPUT
        if isinstance(e, BrokenPipeError):  # the reader went away (| head), or stdout was closed
            if sys.stdout is None and sys.stderr is not None:
                sys.stderr.write("bankproof: standard output is closed: nothing could be written\n")
            return EXIT_INPUT
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EIO, errno.EBADF, errno.EFBIG):
            if sys.stderr is not None:  # standard output is a full device, a dead terminal, closed
                sys.stderr.write(f"bankproof: standard output cannot be written ({e.strerror})\n")
            with contextlib.suppress(OSError, ValueError):  # no second error when Python flushes at exit
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the process ends
            return EXIT_INPUT
        err.write(f"bankproof: internal error: {type(e).__name__}: {e} (please report this input)\n")
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return code


def _watch_interrupts() -> None:
    """Ctrl-C stops the command at once, whatever it is doing: SIGINT is blocked in every thread
    but one that waits for it (a solver deep in C code never sees it, so it cannot swallow it or
    make it wait for its time limit), then one line on stderr and exit 130, no traceback."""
    import os
    import signal
    import threading

    def wait() -> None:
        signal.sigwait({signal.SIGINT})
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("bankproof: interrupted\n")
            sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    threading.Thread(target=wait, name="bankproof-interrupt", daemon=True).start()


def cli() -> int:
    """The ``bankproof`` program (the console entry point): :func:`main` on the process's own
    arguments and streams, with Ctrl-C stopping it within moments (exit 130)."""
    if sys.platform != "win32":
        _watch_interrupts()
    return main()


# API arguments -> the flags that give them (the API names arguments; the CLI names flags)
FLAGS = {
    "arch": "--arch", "access": "--access", "instruction": "--instruction", "shape": "--shape",
    "dims": "--dims", "dtype": "--dtype", "units": "--units", "base_align": "--base-align",
    "banks": "--banks", "timeout": "--timeout", "repeat": "--repeat", "kernels": "--kernels",
    "baseline": "--baseline", "engines": "--engine", "ptx": "--ptx", "args": "--arg",
    "block": "--block", "grid": "--grid", "cta": "--cta", "dynamic_smem": "--dynamic-smem",
    "define": "--define", "include": "--include", "max_steps": "--max-steps", "time_limit": "--time-limit",
    "tensor_maps": "--tensor-map", "buffers": "--buffer", "buffer": "--buffer", "weights": "--weights",
    "padded": "--padded",
}  # fmt: skip


def _as_flags(e, args):
    """``e`` with an API argument's name replaced by the flag that gave it (``shape`` ->
    ``--shape``), when the command itself refused it and has that flag (a spec file's ``arch``
    stays ``arch``, a notation's own field stays the notation's)."""
    from bankproof.models.errors import InputError

    flag = FLAGS.get(e.field)
    sub = getattr(args, "triton_command", "")
    command = {args.command, f"{args.command} {sub}", sub}
    if flag is None or e.where not in command or not hasattr(args, flag[2:].replace("-", "_")):
        return e
    return InputError(e.where, flag, e.problem, e.value)


def _error(args, message: str, out: TextIO, err: TextIO) -> None:
    if getattr(args, "json", False):
        out.write(json.dumps({"schema": 2, "error": message}) + "\n")
    err.write(f"bankproof: {message}\n")


if __name__ == "__main__":
    raise SystemExit(cli())
