"""What each ``bankproof`` command does once its arguments are parsed: read the inputs, call the
API, write the rendering to ``out``, and return the exit code (messages for the user go to
``err``). API errors name arguments (``timeout``); here they are mapped to the flags
(``--timeout``) the user typed.

>>> import argparse, io
>>> out = io.StringIO()
>>> layout(argparse.Namespace(notation="i", shape="32", dtype=None, units="element", base_align=0,
...        dims=None, banks=False, json=False), out, io.StringIO())
0
>>> out.getvalue().splitlines()[0]
'notation: formula'
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import LINES_BYTES, read_stream, read_text
from bankproof.verifier import api
from bankproof.verifier.api.gpu import gpu_check
from bankproof.verifier.api.layout import describe_layout
from bankproof.verifier.api.verify import page_data
from bankproof.verifier.api.wavefronts import run_lines_each
from bankproof.verifier.render import explain as explain_render
from bankproof.verifier.render import html as html_render
from bankproof.verifier.render import layout as layout_render
from bankproof.verifier.render import scope as scope_render
from bankproof.verifier.render import text as text_render


def _check_timeout(command: str, timeout: float) -> float:
    if not 0 < timeout <= 3600:
        raise InputError(command, "--timeout", "must be between 0 and 3600 seconds", timeout)
    return timeout


def check_writable(command: str, flag: str, path: str, inputs: tuple[str, ...] = ()) -> None:
    """Refuse, before any work is done, an output file that is empty, cannot be written, or is one
    of the command's ``inputs`` (writing it would destroy what was read)."""
    from bankproof.models.files import is_input

    if not path.strip():
        raise InputError(command, flag, "must name a file", path)
    if is_input(path):
        raise InputError(command, flag, "is a file this run read: it would be overwritten", path)
    for given in inputs:
        if not given:
            continue
        try:
            same = os.path.exists(path) and os.path.samefile(path, given)
        except OSError:
            same = False
        if same:
            raise InputError(command, flag, "is the command's own input file: it would be overwritten", path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InputError(command, flag, "is a folder, not a file", path)
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise InputError(command, flag, "cannot be written (no such writable folder)", path)


def write_output(command: str, flag: str, path: str, text: str, updates: bool = False) -> None:
    """Write an output file; never one this run read (a spec, a header, an export, a kernels file
    or a baseline): that is refused, the input kept; ``updates``: the file is one this run reads
    in order to update it (``--update-baseline``)."""
    from bankproof.models.files import is_input

    if is_input(path) and not updates:
        raise InputError(command, flag, "is a file this run read: it would be overwritten", path)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise InputError(command, flag, f"cannot be written ({e.strerror})", path) from None


def verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_timeout("verify", args.timeout)
    if args.html is not None:
        check_writable("verify", "--html", args.html, (args.spec,))
    # an atom it cannot read: the rest answered, that one named
    result = api.verify(spec=args.spec, engines=args.engine, timeout=args.timeout)
    if args.html is not None:
        page = html_render.to_html(result, page_data(args.spec, result))
        write_output("verify", "--html", args.html, page)
    out.write(result.to_json() if args.json else text_render.to_text(result))
    return result.exit_code


def synth(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_timeout("synth", args.timeout)
    result = api.synth(
        spec=args.spec, engines=args.engine, timeout=args.timeout,
        weights=_weights(args.weights), padded=args.padded,
    )  # fmt: skip
    out.write(result.to_json() if args.json else text_render.synth_text(result))
    return result.exit_code


def _weights(text: str | None) -> dict[str, float] | None:
    """``--weights wavefronts=1,operations=16`` as a dict (its checks are the API's)."""
    if text is None:
        return None
    out: dict[str, float] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if key.strip() in out:
            raise InputError("synth", "--weights", "names one cost twice", key.strip())
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise InputError("synth", "--weights", "must be COST=NUMBER,...", part) from None
        if not eq:
            raise InputError("synth", "--weights", "must be COST=NUMBER,...", part)
    return out


def explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = api.explain(spec=args.spec)
    out.write(result.to_json() if args.json else explain_render.to_text(result))
    return 0


def convert(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_timeout("convert", args.timeout)
    result = api.convert(spec=args.spec, timeout=args.timeout)
    out.write(result.to_json() if args.json else text_render.convert_text(result))
    return result.exit_code


def layout(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    names = [n.strip() for n in args.dims.split(",")] if args.dims else None
    if names is not None and not all(n.isidentifier() for n in names):
        raise InputError("layout", "--dims", "must be identifiers separated by commas", args.dims)
    result = describe_layout(
        args.notation, args.shape, args.dtype, args.units, args.base_align, names, args.banks,
    )  # fmt: skip
    out.write(result.to_json() if args.json else layout_render.to_text(result))
    return 0


def wavefronts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    target.check_arch(args.arch, "wavefronts", "--arch")  # before reading the input
    if args.input == "-":
        stdin = __import__("sys").stdin
        text = read_stream(getattr(stdin, "buffer", stdin), LINES_BYTES, "wavefronts", "--input")
        lines = text.splitlines()
    else:
        lines = read_text(args.input, LINES_BYTES, "wavefronts", "--input").splitlines()
    bad = 0
    for n, r in run_lines_each(lines, args.arch):  # the good lines answered whatever the bad ones say
        if isinstance(r, InputError):
            bad += 1
            out.write(json.dumps({"line": n, "error": str(r)}) + "\n")
            err.write(f"bankproof: {r}\n")
        else:
            out.write(r.to_json())
    return 2 if bad else 0  # bad input (each bad line named above)


def show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.svg is not None:
        check_writable("show", "--svg", args.svg, (args.spec,))
    result = api.show(spec=args.spec, access=args.access, instruction=args.instruction)
    terminal = out.isatty() and not os.environ.get("NO_COLOR")  # https://no-color.org
    color = args.color == "always" or (args.color == "auto" and terminal)
    out.write(result.to_json() if args.json else scope_render.to_text_with_matrices(result, color))
    if args.svg is not None:
        write_output("show", "--svg", args.svg, scope_render.to_svg(result))
    return 0


def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from bankproof.verifier.web import server as serve

    server = serve.make_server(args.file, args.host, args.port)
    out.write(f"bankproof workbench: {serve.url(server)}  (Ctrl-C stops it)\n")
    out.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def gpu(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.repeat < 1 or args.repeat > 1000:
        raise InputError("gpu", "--repeat", "must be between 1 and 1000", args.repeat)
    result = gpu_check(args.spec, args.repeat)
    out.write(result.to_json() if args.json else text_render.gpu_text(result))
    return 0 if result.ok else 4
