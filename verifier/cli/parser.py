"""The ``bankproof`` argument parser, built from the standard library only (no engine is
imported to print ``--help``): each command names its runner (``run="verify"``), which
:mod:`bankproof.verifier.cli.main` imports when the command runs.

>>> build_parser().parse_args(["verify", "x.toml", "--engine", "z3"]).run
'verify'
"""

from __future__ import annotations

import argparse
import sys

from bankproof.verifier.cli.flags import (
    DEFAULT_ARCH,
    arch_flag,
    command,
    engine_options,
    json_flag,
    timeout_flag,
)
from bankproof.verifier.cli.parser_kernel import add_kernel
from bankproof.verifier.cli.parser_triton import add_triton

EXIT_INPUT = 2
DTYPES = "f64 f32 tf32 f16 bf16 f8e4m3 f8e5m2 i64 i32 i16 i8 ..."


class _Once(argparse._StoreAction):
    """An option that takes one value: given twice is an error (never the last one silently)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        seen = namespace.__dict__.setdefault("_given_options", set())
        if option_string is not None:
            if self.dest in seen:
                parser.error(f"{option_string} is given twice (it takes one value)")
            seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2, and refuses an option of
    one value given twice."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, rest = super().parse_known_args(args, namespace)
        ns.__dict__.pop("_given_options", None)
        return ns, rest

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"bankproof: {message}\n(see '{self.prog} --help')\n")  # the command's own help
        raise SystemExit(EXIT_INPUT)


def build_parser() -> argparse.ArgumentParser:
    from bankproof.models.version import DOCS, VERSION

    p = _Parser(
        prog="bankproof",
        description="Proofs about GPU shared-memory layouts.",
        epilog=f"documentation: {DOCS}/index.md",
    )
    p.add_argument("--version", action="version", version=f"bankproof {VERSION}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _layout(sub)
    _wavefronts(sub)
    _verify(sub)
    _synth(sub)
    _explain(sub)
    _convert(sub)
    _gpu(sub)
    _show(sub)
    _serve(sub)
    _mcp(sub)
    _descriptor(sub)
    _agree(sub)
    add_kernel(sub)
    add_triton(sub, _Parser)
    _link_formats(p)
    return p


def _layout(sub) -> None:
    """``bankproof layout``."""
    lay = command(
        sub,
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
    lay.add_argument("--dtype", help=f"element type ({DTYPES})")
    lay.add_argument(
        "--units",
        choices=["element", "byte"],
        default="element",
        help="CuTe offsets: element indices (default) or byte addresses",
    )
    lay.add_argument("--base-align", type=int, default=0, help="CuTe byte units: buffer alignment in bytes")
    lay.add_argument("--dims", help="dim names, comma separated (default m,n for 2-D)")
    lay.add_argument("--banks", action="store_true", help="print the bank of every element (memory layouts)")
    json_flag(lay)


def _wavefronts(sub) -> None:
    """``bankproof wavefronts``."""
    wav = command(
        sub,
        "wavefronts",
        help="wavefronts of warp instructions from per-lane byte addresses (JSONL)",
        description='For each input line {"instr", "byte_offsets": [32 ints], "active": [32 bools]} '
        'print {"wavefronts", "ideal", "groups", "status"} (the hardware model, measured on sm90); '
        'a bad line prints {"line", "error"} in its place (and the error on stderr), the others are '
        "answered, and the exit code is 2.",
    )
    wav.add_argument("--input", required=True, help="JSONL file of cases, or - for stdin")
    arch_flag(wav, f'the target arch (default {DEFAULT_ARCH}; a line\'s own "arch" overrides it)')


def _verify(sub) -> None:
    """``bankproof verify``."""
    ver = command(
        sub,
        "verify",
        help="wavefronts of every access of a spec, with a counterexample when it conflicts",
        description="Count the wavefronts of every access in SPEC three ways that must agree: "
        "enumeration (every warp instruction through the measured hardware model), Lemma 9.4, and Z3. "
        "Exit 0 conflict-free, 1 conflicts (with a counterexample), 2 bad input, 3 unknown, "
        "4 engines disagree.",
    )
    ver.add_argument("spec", help="a spec file (TOML)")
    engine_options(
        ver,
        "machine-readable report (schema 1)",
        "which engines answer (default all; they must agree, else exit 4)",
    )
    ver.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained page: verdicts, counterexample, bank maps, matrices, §5.4",
    )


def _synth(sub) -> None:
    """``bankproof synth``."""
    syn = command(
        sub,
        "synth",
        help="the optimal memory layout for a spec's writer and reader, in every notation",
        description="Ignore the spec's memory layout; build the optimal one for its first store (writer) "
        "and first load (reader) by §5.4, print it in every notation that expresses it, and verify "
        "every access with it. With [[engine]] tables (TMA boxes, descriptor reads) also the cheapest "
        "layout all of them take, its Pareto front over wavefronts, instructions, engine operations, "
        "XOR and padding terms and shared bytes, and (--weights) the front's pick; --padded: the same "
        "front over the synthesized layout and plain and padded ones.",
    )
    syn.add_argument("spec", help="a spec file (TOML); [memory] is optional")
    syn.add_argument(
        "--padded",
        action="store_true",
        help="weigh the synthesized layout against plain and padded ones (shared bytes among the costs)",
    )
    syn.add_argument(
        "--weights",
        metavar="COST=W,...",
        help="weights of wavefronts, instructions, operations, xor_terms, pad_terms, shared_bytes for "
        "picking one layout of the Pareto front (e.g. wavefronts=1,operations=16)",
    )
    engine_options(
        syn, "machine-readable report", "engines for the verification and (z3) the optimality proof"
    )


def _explain(sub) -> None:
    """``bankproof explain``."""
    exp = command(
        sub,
        "explain",
        help="the §5.4 construction narrated step by step",
        description="Narrate the optimal-swizzle construction for the spec's writer and reader.",
    )
    exp.add_argument("spec", help="a spec file (TOML); [memory] is optional")
    json_flag(exp, "the construction's sets (machine-readable)")


def _convert(sub) -> None:
    """``bankproof convert``."""
    con = command(
        sub,
        "convert",
        help="convert the spec's first layout into its second: shuffle plan and proofs",
        description="Plan the conversion of the spec's first access layout (source) into its second "
        "(destination): the §5.4 warp-shuffle plan when no data crosses warps, and the round trip "
        "through shared memory, each proved by Z3.",
    )
    con.add_argument("spec", help="a spec file (TOML) with at least two [[access]] layouts")
    json_flag(con, "machine-readable output (all rounds)")
    timeout_flag(con)


def _gpu(sub) -> None:
    """``bankproof gpu``."""
    gpu = command(
        sub,
        "gpu",
        help="run the spec's store and load on the GPU: data check and measured wavefronts",
        description="Store a tensor of distinct values through the spec's memory layout with its first "
        "store access, load it back with its first load access, check every element, and measure the "
        "wavefronts with Nsight Compute next to the prediction. Needs CuPy and a GPU (exit 2 without); "
        "exit 4 when data or wavefronts disagree with the model.",
    )
    gpu.add_argument("spec", help="a spec file (TOML)")
    gpu.add_argument("--repeat", type=int, default=1, help="data-check runs (default 1)")
    json_flag(gpu)


def _show(sub) -> None:
    """``bankproof show``."""
    sho = command(
        sub,
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
        help="color the grid and the matrices (default: when writing to a terminal and NO_COLOR is unset)",
    )
    json_flag(sho, "the wavefront groups (machine-readable)")


def _serve(sub) -> None:
    """``bankproof serve``."""
    srv = command(
        sub,
        "serve",
        help="the workbench: a local web page to toggle a swizzle and watch the conflicts move",
        description="Serve the workbench page (loopback by default; nothing fetched from elsewhere): the "
        "toggle grid, live wavefront counts, the bank scope, the algebra, synth/explain/export. It opens "
        "on the seeds' 16x32 transpose, a spec file, or a TTGIR file's shared buffers.",
    )
    srv.add_argument("file", nargs="?", help="a spec file (TOML) or a TTGIR file (.ttgir)")
    srv.add_argument(
        "--host", default="127.0.0.1", help="a loopback address: 127.0.0.1 (default), localhost or ::1"
    )
    srv.add_argument("--port", type=int, default=8765, help="the port (default: 8765; 0: any free port)")


def _mcp(sub) -> None:
    """``bankproof mcp``."""
    command(
        sub,
        "mcp",
        help="serve verify, synth, convert, agree, wavefronts, kernel and triton scan as MCP tools (stdio)",
        description="A Model Context Protocol server over stdin/stdout for agents: each tool takes content "
        "(a spec as a JSON object or TOML text, PTX/CUDA/TTGIR text, wavefront cases), never a path, and "
        "answers the JSON its command prints with --json; bad arguments are tool errors naming the field. "
        "Needs bankproof[mcp].",
    )


def _descriptor(sub) -> None:
    """``bankproof descriptor``."""
    des = command(
        sub,
        "descriptor",
        help="decode (or encode) a wgmma/tcgen05 shared-memory descriptor: fields, swizzle, tile read",
        description="Decode a 64-bit shared-memory matrix descriptor (sm90 wgmma, sm100 tcgen05): its "
        "fields, its swizzle as CuTe's Sw<B,M,S>, the canonical layout and the byte address of every "
        "element of the operand tile it reads (one 32-byte K step).",
    )
    des.add_argument("value", nargs="?", help="the descriptor, 0x... hex or decimal (or give --fields)")
    des.add_argument("--fields", help="encode instead: start=0,lbo=16,sbo=1024,swizzle=128B[,base_offset=0]")
    arch_flag(des, "sm90 (wgmma), sm100 (tcgen05)", required=True, choices=["sm90", "sm100"], default=None)
    des.add_argument("--major", choices=["K", "MN"], default="K", help="the operand's major-ness (default K)")
    des.add_argument("--dtype", default="f16", help="element type: f16, bf16, tf32, e4m3, s8 (default f16)")
    des.add_argument("--rows", type=int, default=64, help="M or N rows of the tile (default 64)")
    json_flag(des)


def _agree(sub) -> None:
    """``bankproof agree``."""
    agr = command(
        sub,
        "agree",
        help="prove a writer (TMA box, software XOR) and a reader (descriptor, software XOR) agree on bytes",
        description="Prove that every element a reader reads (a wgmma/tcgen05 descriptor, or ld/ldmatrix "
        "with a layout and an XOR) is where the writer put it (a TMA box in a swizzle mode, or "
        "st/stmatrix/cp.async with a layout and an XOR), at the tile's base address; otherwise print the "
        "first mismatching element, both byte addresses and the smallest base alignment that makes them "
        "agree. Exit 0 agree, 1 mismatch, 2 bad input, 3 unknown, 4 the engines disagree.",
    )
    agr.add_argument("spec", help="a spec file (TOML): dtype, arch, base, [writer], [reader]")
    agr.add_argument("--base", type=int, default=None, help="the tile's shared address (overrides the spec)")
    timeout_flag(agr, "Z3 time limit, seconds (default 10)")
    json_flag(agr)


class _KeepLinks(argparse.HelpFormatter):
    """Wraps the description as argparse does, but prints the format pages' links whole."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        from bankproof.verifier.cli.formats import FORMATS_HEAD

        return text if text.startswith(FORMATS_HEAD) else super()._fill_text(text, width, indent)


def subcommands(p: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command under ``p`` with its parser, named by its words (``triton scan``), each
    before the commands under it.

    >>> [name for name, _ in subcommands(build_parser())][-3:]
    ['triton capture', 'triton profile', 'triton corpus']
    """
    out = []
    for action in p._actions:  # argparse keeps its subparsers here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((prefix + name, sub))
                out += subcommands(sub, f"{prefix}{name} ")
    return out


def _link_formats(p: argparse.ArgumentParser) -> None:
    """Each command's help ends with the reference pages of the file formats it reads."""
    from bankproof.verifier.cli.formats import COMMAND_FORMATS, format_pages

    for name, sub in subcommands(p):
        if name in COMMAND_FORMATS:
            sub.epilog = "\n\n".join(filter(None, [sub.epilog, format_pages(name)]))
            if sub.formatter_class is argparse.HelpFormatter:
                sub.formatter_class = _KeepLinks
