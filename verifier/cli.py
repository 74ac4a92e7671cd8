"""The ``bankproof`` command: argument parsing, printing and exit codes over the API
(:mod:`bankproof.verifier.api`) and the renderers (:mod:`bankproof.verifier.render`).

Exit codes: 0 success / proved, 1 refuted, 2 usage or input error, 3 unknown (solver time
limit), 4 engines disagree, 70 internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from bankproof.models import dtypes
from bankproof.models.errors import InputError
from bankproof.models.hardware import check_arch
from bankproof.verifier import api, batch, describe, gpu, scope
from bankproof.verifier.check import ENGINE_NAMES
from bankproof.verifier.render import explain as explain_render
from bankproof.verifier.render import html as html_render
from bankproof.verifier.render import layout as layout_render
from bankproof.verifier.render import scan as scan_render
from bankproof.verifier.render import scope as scope_render
from bankproof.verifier.render import text as text_render
from bankproof.verifier.results import EXIT
from bankproof.verifier.spec import load_spec
from bankproof.verifier.triton import corpus

EXIT_INPUT = 2
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"bankproof: {message}\n(see 'bankproof --help')\n")
        raise SystemExit(EXIT_INPUT)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bankproof", description="Proofs about GPU shared-memory layouts.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    lay = sub.add_parser(
        "layout",
        help="parse a layout in any notation and show its bases",
        description="Parse a layout (Triton attribute, CuTe swizzle, explicit bases or formula) "
        "and show its kind, validity, bases per input dim and, for memory layouts, every "
        "notation that expresses it.",
    )
    lay.add_argument(
        "notation",
        help="the layout: '#ttg.blocked<...>', 'Sw<3,2,3> o (8,8):(1,8)', "
        "'{\"offset\": [[0, 1], ...]}' or '32*m + (n ^ (2*m))'",
    )
    lay.add_argument("--shape", help="tensor shape, dim0 first, e.g. 16x32")
    lay.add_argument("--dtype", help=f"element type ({', '.join(dtypes.BITS)})")
    lay.add_argument(
        "--units",
        choices=["element", "byte"],
        default="element",
        help="CuTe offsets: element indices (default) or byte addresses",
    )
    lay.add_argument("--base-align", type=int, default=0, help="CuTe byte units: buffer alignment in bytes")
    lay.add_argument("--dims", help="dim names, comma separated (default m,n for 2-D)")
    lay.add_argument("--banks", action="store_true", help="print the bank of every element (memory layouts)")
    lay.add_argument("--json", action="store_true", help="machine-readable output")
    lay.set_defaults(run=_layout)

    wav = sub.add_parser(
        "wavefronts",
        help="wavefronts of warp instructions from per-lane byte addresses (JSONL)",
        description='For each input line {"instr", "byte_offsets": [32 ints], "active": [32 bools]} '
        'print {"wavefronts", "ideal", "groups", "status"} (the hardware model, measured on sm90).',
    )
    wav.add_argument("--input", required=True, help="JSONL file of cases, or - for stdin")
    wav.add_argument("--arch", default="sm90", help="sm80, sm90 or sm100 (default sm90)")
    wav.set_defaults(run=_wavefronts)

    ver = sub.add_parser(
        "verify",
        help="wavefronts of every access of a spec, with a counterexample when it conflicts",
        description="Count the wavefronts of every access in SPEC three ways that must agree: "
        "enumeration (every warp instruction through the measured hardware model), Lemma 9.4, and Z3. "
        "Exit 0 conflict-free, 1 conflicts (with a counterexample), 2 bad input, 3 unknown, "
        "4 engines disagree.",
    )
    ver.add_argument("spec", help="a spec file (TOML)")
    _engine_options(
        ver,
        "machine-readable report (schema 1)",
        "which engines answer (default all; they must agree, else exit 4)",
    )
    ver.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained page: verdicts, counterexample, bank maps, matrices, §5.4",
    )
    ver.set_defaults(run=_verify)

    syn = sub.add_parser(
        "synth",
        help="the optimal memory layout for a spec's writer and reader, in every notation",
        description="Ignore the spec's memory layout; build the optimal one for its first store (writer) "
        "and first load (reader) by §5.4, print it in every notation that expresses it, and verify "
        "every access with it.",
    )
    syn.add_argument("spec", help="a spec file (TOML); [memory] is optional")
    _engine_options(
        syn, "machine-readable report", "engines for the verification and (z3) the optimality proof"
    )
    syn.set_defaults(run=_synth)

    exp = sub.add_parser(
        "explain",
        help="the §5.4 construction narrated step by step",
        description="Narrate the optimal-swizzle construction for the spec's writer and reader.",
    )
    exp.add_argument("spec", help="a spec file (TOML); [memory] is optional")
    exp.add_argument("--json", action="store_true", help="the construction's sets (machine-readable)")
    exp.set_defaults(run=_explain)

    con = sub.add_parser(
        "convert",
        help="convert the spec's first layout into its second: shuffle plan and proofs",
        description="Plan the conversion of the spec's first access layout (source) into its second "
        "(destination): the §5.4 warp-shuffle plan when no data crosses warps, and the round trip "
        "through shared memory, each proved by Z3.",
    )
    con.add_argument("spec", help="a spec file (TOML) with at least two [[access]] layouts")
    con.add_argument("--json", action="store_true", help="machine-readable output (all rounds)")
    con.add_argument("--timeout", type=float, default=10.0, help="seconds per solver query (default 10)")
    con.set_defaults(run=_convert)

    gpu = sub.add_parser(
        "gpu",
        help="run the spec's store and load on the GPU: data check and measured wavefronts",
        description="Store a tensor of distinct values through the spec's memory layout with its first "
        "store access, load it back with its first load access, check every element, and measure the "
        "wavefronts with Nsight Compute next to the prediction. Needs CuPy and a GPU (exit 2 without); "
        "exit 4 when data or wavefronts disagree with the model.",
    )
    gpu.add_argument("spec", help="a spec file (TOML)")
    gpu.add_argument("--repeat", type=int, default=1, help="data-check runs (default 1)")
    gpu.add_argument("--json", action="store_true", help="machine-readable output")
    gpu.set_defaults(run=_gpu)

    sho = sub.add_parser(
        "show",
        help="the bank scope of one instruction: lanes on banks, hits per bank, conflicts",
        description="For one instruction of an access: per wavefront group, a grid of 128-byte segments "
        "by banks with the lane in each cell, the words per bank, conflicts marked '!'; then the matrix "
        "views (rows: tensor bits; columns: offset bits, and register/lane/warp bits) of the memory "
        "layout and the access's layout.",
    )
    sho.add_argument("spec", help="a spec file (TOML)")
    sho.add_argument("--access", help="the access's name (default: the first)")
    sho.add_argument(
        "--instruction",
        type=int,
        help="which warp instruction (default: the first of those with the most conflicts)",
    )
    sho.add_argument("--svg", metavar="FILE", help="also draw it as an SVG picture")
    sho.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="color the grid and the matrices (default: when writing to a terminal)",
    )
    sho.add_argument("--json", action="store_true", help="the wavefront groups (machine-readable)")
    sho.set_defaults(run=_show)

    srv = sub.add_parser(
        "serve",
        help="the workbench: a local web page to toggle a swizzle and watch the conflicts move",
        description="Serve the workbench page (loopback by default; nothing fetched from elsewhere): the "
        "toggle grid, live wavefront counts, the bank scope, the algebra, synth/explain/export. It opens "
        "on the seeds' 16x32 transpose, a spec file, or a TTGIR file's shared buffers.",
    )
    srv.add_argument("file", nargs="?", help="a spec file (TOML) or a TTGIR file (.ttgir)")
    srv.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
    srv.add_argument("--port", type=int, default=8765, help="the port (default: 8765; 0: any free port)")
    srv.set_defaults(run=_serve)

    tri = sub.add_parser(
        "triton",
        help="check the shared-memory layouts a Triton kernel chose (TTGIR)",
        description="Regression-check Triton's shared-memory layouts.",
    )
    tsub = tri.add_subparsers(dest="triton_command", metavar="SUBCOMMAND", parser_class=_Parser)
    tsub.required = True
    scan = tsub.add_parser(
        "scan",
        help="scan TTGIR files: every shared buffer and access, its wavefronts and optimum",
        description="Read TTGIR text (no Triton needed): every shared buffer, each access's exact "
        "wavefronts, the optimum for its writers and readers, a better layout when there is one, and "
        "the best shared-memory plan of each convert_layout. Exit 1 when a buffer is above its optimum.",
    )
    scan.add_argument("files", nargs="+", metavar="FILE.ttgir")
    scan.add_argument(
        "--ptx",
        action="append",
        metavar="FILE.ptx",
        help="the same compile's PTX (one per TTGIR file, in order): add the whole-kernel ledger, every "
        "PTX shared-memory instruction owned and counted; exit 4 where the PTX and the count disagree",
    )
    scan.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="a kernel argument's value for loop trip counts (e.g. K=4096; program_id_x, num_programs_x)",
    )
    scan.add_argument(
        "--allow-unknown",
        action="store_true",
        help="exit 0 even when an access could not be analysed or an optimum is unknown (default: exit 3)",
    )
    fmt = scan.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable report")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code-scanning tools")
    scan.set_defaults(run=_scan)
    cor = tsub.add_parser(
        "corpus",
        help="compile the built-in kernel corpus with Triton (CPU), scan it, compare with a baseline",
        description="Compile >= 40 kernel configurations per arch to TTGIR with Triton on the CPU (parallel "
        "workers), scan every shared-memory access, and compare each with the baseline. Exit 1 when an "
        "access costs more than its baseline (or is not optimal, with --require-optimal). --kernels FILE.py "
        "takes your own @triton.jit kernels and a CONFIGS list (see verifier/triton/corpus.py). "
        "Exit 4 when the instructions the scan counts an access with differ from those in Triton's PTX.",
    )
    cor.add_argument(
        "--arch", default="sm80,sm90,sm100", help="comma-separated: sm80, sm90, sm100 (default all three)"
    )
    cor.add_argument("--baseline", metavar="FILE", help="baseline JSON to compare with (or write)")
    cor.add_argument("--update-baseline", action="store_true", help="write this run's numbers to --baseline")
    cor.add_argument(
        "--require-optimal", action="store_true", help="exit 1 when any buffer is above its optimum"
    )
    cor.add_argument("--kernels", metavar="FILE.py", help="a Python file with kernels and CONFIGS")
    cor.add_argument(
        "--allow-unknown",
        action="store_true",
        help="exit 0 even when a configuration did not compile, an access was not analysed or an optimum "
        "is unknown (default: exit 3)",
    )
    cor.add_argument("--workers", type=int, default=0, help="compile processes (default: CPU count)")
    cor.add_argument(
        "--compile-timeout",
        type=float,
        default=300.0,
        help="seconds per compile; one past it is reported as not compiled (default 300)",
    )
    cfmt = cor.add_mutually_exclusive_group()
    cfmt.add_argument("--json", action="store_true", help="machine-readable report")
    cfmt.add_argument(
        "--sarif", action="store_true", help="SARIF 2.1.0 for code-scanning tools (with the ledger findings)"
    )
    cor.set_defaults(run=_corpus)
    return p


def _engine_options(p: argparse.ArgumentParser, json_help: str, engine_help: str) -> None:
    """``--json``, ``--engine`` and ``--timeout``, shared by verify and synth."""
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("--engine", choices=list(ENGINE_NAMES), default="all", help=engine_help)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per solver query (default 10)")


def _check_timeout(command: str, timeout: float) -> float:
    if not 0 < timeout <= 3600:
        raise InputError(command, "--timeout", "must be between 0 and 3600 seconds", timeout)
    return timeout


def _writable(command: str, flag: str, path: str) -> None:
    """Refuse an output file that cannot be written before any work is done."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InputError(command, flag, "is a folder, not a file", path)
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise InputError(command, flag, "cannot be written (no such writable folder)", path)


def _write(command: str, flag: str, path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise InputError(command, flag, f"cannot be written ({e.strerror})", path) from None


def _verify(args: argparse.Namespace) -> int:
    _check_timeout("verify", args.timeout)
    if args.html:
        _writable("verify", "--html", args.html)
    spec = load_spec(args.spec)
    result = api.verify(spec=spec, engines=args.engine, timeout=args.timeout)
    if args.html:
        _write("verify", "--html", args.html, html_render.to_html(result, scope.page_data(spec, result)))
    sys.stdout.write(result.to_json() if args.json else text_render.to_text(result))
    return result.exit_code


def _synth(args: argparse.Namespace) -> int:
    _check_timeout("synth", args.timeout)
    result = api.synth(
        spec=load_spec(args.spec, require_memory=False), engines=args.engine, timeout=args.timeout
    )
    sys.stdout.write(result.to_json() if args.json else text_render.synth_text(result))
    return result.exit_code


def _explain(args: argparse.Namespace) -> int:
    result = api.explain(spec=load_spec(args.spec, require_memory=False))
    sys.stdout.write(result.to_json() if args.json else explain_render.to_text(result))
    return 0


def _convert(args: argparse.Namespace) -> int:
    _check_timeout("convert", args.timeout)
    result = api.convert(spec=load_spec(args.spec, require_memory=False), timeout=args.timeout)
    sys.stdout.write(result.to_json() if args.json else text_render.convert_text(result))
    return result.exit_code


def _layout(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.dims.split(",")] if args.dims else None
    if names is not None and not all(n.isidentifier() for n in names):
        raise InputError("layout", "--dims", "must be identifiers separated by commas", args.dims)
    result = describe.describe_layout(
        args.notation, args.shape, args.dtype, args.units, args.base_align, names, args.banks,
        banks_flag="--banks",  # errors name the flag, not the API's argument
    )  # fmt: skip
    sys.stdout.write(result.to_json() if args.json else layout_render.to_text(result))
    return 0


def _wavefronts(args: argparse.Namespace) -> int:
    check_arch(args.arch, "wavefronts", "--arch")  # before reading the input
    if args.input == "-":
        lines = sys.stdin.read().splitlines()
    else:
        try:
            lines = Path(args.input).read_text().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or type(e).__name__
            raise InputError("wavefronts", "--input", f"cannot be read ({why})", args.input) from None
    sys.stdout.write("".join(r.to_json() for r in batch.run_lines(lines, args.arch)))
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.svg:
        _writable("show", "--svg", args.svg)
    result = api.show(spec=load_spec(args.spec), access=args.access, instruction=args.instruction)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    sys.stdout.write(result.to_json() if args.json else scope_render.to_text_with_matrices(result, color))
    if args.svg:
        _write("show", "--svg", args.svg, scope_render.to_svg(result))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from bankproof.verifier import serve

    if not 0 <= args.port <= 65535:
        raise InputError("serve", "--port", "must be between 0 and 65535", args.port)
    server = serve.make_server(args.file, args.host, args.port)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"bankproof: serving on {args.host}: reachable from other machines\n")
    sys.stdout.write(f"bankproof workbench: {serve.url(server)}  (Ctrl-C stops it)\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _gpu(args: argparse.Namespace) -> int:
    if args.repeat < 1 or args.repeat > 1000:
        raise InputError("gpu", "--repeat", "must be between 1 and 1000", args.repeat)
    spec = load_spec(args.spec)
    api._nvidia_only(spec, "gpu")
    result = gpu.gpu_check(spec, args.repeat)
    sys.stdout.write(result.to_json() if args.json else text_render.gpu_text(result))
    return 0 if result.ok else 4


def _read_ttgir(path: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("triton scan", "FILE", f"cannot be read ({e.__class__.__name__})", path) from None


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


def _scan(args: argparse.Namespace) -> int:
    if args.ptx is not None and len(args.ptx) != len(args.files):
        raise InputError("triton scan", "--ptx", "must be given once per TTGIR file", len(args.ptx))
    if args.arg and args.ptx is None:
        raise InputError("triton scan", "--arg", "needs --ptx (trip counts are the ledger's)")
    ptx = [_read_ttgir(p) for p in args.ptx] if args.ptx else None
    result = api.scan_ttgir(
        [_read_ttgir(p) for p in args.files], list(args.files), ptx, _kernel_args(args.arg) or None
    )
    if args.sarif:
        sys.stdout.write(json.dumps(scan_render.to_sarif(result), indent=1) + "\n")
    else:
        sys.stdout.write(result.to_json() if args.json else scan_render.to_text(result))
    for d in result.lowering:
        sys.stderr.write(f"instructions differ from Triton's PTX: {d}\n")
    if result.lowering:
        return EXIT["disagree"]
    return _gate(result.worse, result.unchecked, args.allow_unknown)


def _gate(worse: bool, unchecked: list[str] | tuple[str, ...], allow: bool) -> int:
    """1 when something costs more than it should; else 3 when something was not checked (a CI
    gate must not pass on nothing) unless allowed; else 0. What was not checked goes to stderr."""
    for u in unchecked:
        sys.stderr.write(f"not checked: {u}\n")
    if worse:
        return 1
    return EXIT["unknown"] if unchecked and not allow else 0


def _corpus(args: argparse.Namespace) -> int:
    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    if args.update_baseline and not args.baseline:
        raise InputError("triton corpus", "--update-baseline", "needs --baseline FILE")
    if not 0 < args.compile_timeout <= 86400:
        raise InputError(
            "triton corpus", "--compile-timeout", "must be between 0 and 86400 seconds", args.compile_timeout
        )
    result = corpus.check_corpus(
        archs, args.kernels, args.baseline, args.workers, compare_baseline=not args.update_baseline,
        limit_s=args.compile_timeout,
    )  # fmt: skip
    if args.sarif:
        sys.stdout.write(json.dumps(scan_render.corpus_sarif(result), indent=1) + "\n")
    else:
        sys.stdout.write(result.to_json() if args.json else scan_render.corpus_text(result, archs))
    if args.update_baseline:
        flat = corpus.flat_accesses(list(result.entries))
        _write("triton corpus", "--baseline", args.baseline,
               json.dumps({"schema": 1, "accesses": flat}, indent=1, sort_keys=True) + "\n")  # fmt: skip
        sys.stderr.write(f"baseline: {len(flat)} accesses -> {args.baseline}\n")
    for w in result.worse:
        sys.stderr.write(f"worse than baseline: {w}\n")
    if args.require_optimal:
        for g in result.gaps:
            sys.stderr.write(f"not optimal: {g}\n")
    for d in result.lowering:  # the scan's instructions are not Triton's: its counts may be wrong
        sys.stderr.write(f"instructions differ from Triton's PTX: {d}\n")
    if result.lowering:
        return EXIT["disagree"]
    return _gate(
        bool(result.worse or (args.require_optimal and result.gaps)), result.unchecked, args.allow_unknown
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.run(args)
    except InputError as e:
        _error(args, str(e))
        return EXIT_INPUT
    except (KeyboardInterrupt, BrokenPipeError):
        return EXIT_INPUT
    except Exception as e:  # noqa: BLE001 - never show a user a traceback
        sys.stderr.write(f"bankproof: internal error: {type(e).__name__}: {e} (please report this input)\n")
        return EXIT_INTERNAL
    return code


def _error(args: argparse.Namespace, message: str) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"schema": 1, "error": message}) + "\n")
    sys.stderr.write(f"bankproof: {message}\n")


if __name__ == "__main__":
    raise SystemExit(main())
