"""``bankproof triton``'s subcommands (``scan``, ``profile``, ``corpus``) on the command line's parser."""

from __future__ import annotations

import argparse

from bankproof.verifier.cli.flags import arch_flag, command, engine_flag, json_flag, timeout_flag
from bankproof.verifier.cli.formats import KERNELS_FILE_HELP

REQUIRE_OPTIMAL_HELP = (
    "also exit 1 when a buffer is above the optimum over layouts and instructions (by default only when "
    "another shared layout with the same instructions would do better: what the layout choice controls)"
)
SARIF_ROOT_HELP = ("with --sarif: the repository's checkout; source paths under it become relative URIs "
                   "against %%SRCROOT%%, so code scanning maps them to the repository")  # fmt: skip


def gate_flags(p: argparse.ArgumentParser, allow_unknown_help: str) -> None:
    """The report and gate flags ``triton scan`` and ``triton replay`` share (one gate, one format)."""
    p.add_argument("--allow-unknown", action="store_true", help=allow_unknown_help)
    fmt = p.add_mutually_exclusive_group()
    json_flag(fmt, "machine-readable report")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code-scanning tools")
    p.add_argument("--sarif-root", metavar="DIR", help=SARIF_ROOT_HELP)
    p.add_argument("--require-optimal", action="store_true", help=REQUIRE_OPTIMAL_HELP)


def add_triton(sub, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``triton`` and its subcommands to ``sub`` (the top-level subparsers)."""
    tri = sub.add_parser(
        "triton",
        help="check the shared-memory layouts a Triton kernel chose (TTGIR)",
        description="Regression-check Triton's shared-memory layouts.",
    )
    tsub = tri.add_subparsers(dest="triton_command", metavar="SUBCOMMAND", parser_class=parser_class)
    tsub.required = True
    scan = command(
        tsub,
        "scan",
        help="scan TTGIR files: every shared buffer and access, its wavefronts and optimum",
        description="Read TTGIR text (no Triton needed): every shared buffer, each access's exact "
        "wavefronts, the optimum for its writers and readers, a better layout when there is one, and "
        "the best shared-memory plan of each convert_layout. Exit 1 when a buffer is above its optimum.",
    )
    scan.add_argument(
        "files", nargs="+", metavar="FILE.ttgir", help="TTGIR text (MLIR_ENABLE_DUMP, or a compile's .ttgir)"
    )
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
        help="a kernel argument's value for loop trip counts (e.g. K=4096; program_id_x, num_programs_x), "
        "or trips_L<line>=N: the trip count of a loop whose bound is loaded from memory (a formula's name)",
    )
    scan.add_argument(
        "--buffer",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="what a pointer argument points to (FILE.npy, raw bytes FILE[:DTYPE], or null): the launch run "
        "(every integer argument given) reads it where its loops, branches or addresses load data",
    )
    gate_flags(
        scan, "exit 0 even when an access could not be analysed or an optimum is unknown (default: exit 3)"
    )
    engine_flag(scan, "also answer each access by these engines, as verify does (default: counted only, "
                "exhaustively by the hardware model)", default=None)  # fmt: skip
    timeout_flag(scan, "seconds per solver query with --engine (default 10)")
    rep = command(
        tsub,
        "replay",
        help="answer a captured program's Triton launches (triton capture) without a GPU",
        description="Every launch a capture directory holds (bankproof.capture or triton capture), "
        "its compile scanned with the launch's integer arguments, grid (CTA 0) and captured buffers, and "
        "the launch's totals over its grid; worst first. Exit as triton scan does.",
    )
    rep.add_argument("dir", metavar="DIR", help="a capture directory")
    gate_flags(rep, "exit 0 even when something could not be analysed")
    cap = command(
        tsub,
        "capture",
        help="run a command and capture its Triton compiles and launches into DIR (for triton replay)",
        description="Run CMD (after --) with Triton's public hooks recording every compile it loads and each "
        "distinct launch of a Triton kernel (@triton.jit's and torch.compile's): grid, integer arguments, "
        "and the buffers its shared-memory control flow and addresses load (bounded). Exit as CMD exits.",
    )
    cap.add_argument("dir", metavar="DIR", help="where the capture is written")
    cap.add_argument(
        "cmd", nargs=argparse.REMAINDER, metavar="-- CMD", help="the command to run (python train.py ...)"
    )
    prof = command(
        tsub,
        "profile",
        help="explain a measured Nsight Compute profile of a kernel line by line with the ledger",
        description="Join Nsight Compute's source page of one launch (ncu -i REP --page source --csv "
        "--print-source cuda,sass, profiled with --section SourceCounters) with the whole-kernel ledger of "
        "the same compile: per source line, shared instructions executed, measured and predicted "
        "wavefronts (the ledger's per execution times the executions measured), the ideal, and what "
        "makes any excess. Exit 4 when a modelled line's prediction differs from the measurement.",
    )
    prof.add_argument("ttgir", metavar="FILE.ttgir", help="the launched compile's TTGIR")
    prof.add_argument("--ptx", required=True, metavar="FILE.ptx", help="the same compile's PTX")
    prof.add_argument("--ncu", required=True, metavar="EXPORT.csv", help="the launch's source-page CSV")
    prof.add_argument("--arg", action="append", default=[], metavar="NAME=INT",
                      help="a kernel argument's value, as the launch had it (program_id_x, ...), or "
                           "trips_L<line>=N for a loop whose bound it loaded from memory")  # fmt: skip
    prof.add_argument("--ctas", type=int, default=1, help="CTAs the launch ran (default 1)")
    json_flag(prof, "machine-readable report")
    cor = command(
        tsub,
        "corpus",
        help="compile the built-in kernel corpus with Triton (CPU), scan it, compare with a baseline",
        description="Compile >= 40 kernel configurations per arch to TTGIR with Triton on the CPU (parallel "
        "workers), scan every shared-memory access, and compare each with the baseline. Exit 1 when an "
        "access costs more than its baseline (or is not optimal, with --require-optimal). --kernels FILE.py "
        "takes your own @triton.jit kernels and a CONFIGS list (format below). "
        "Exit 4 when the instructions the scan counts an access with differ from those in Triton's PTX.",
        epilog=KERNELS_FILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arch_flag(cor, "comma-separated archs (default: the targets' corpus archs)", default=None)
    cor.add_argument("--baseline", metavar="FILE", help="baseline JSON to compare with (or write)")
    cor.add_argument("--update-baseline", action="store_true", help="write this run's numbers to --baseline")
    cor.add_argument("--require-optimal", action="store_true", help=REQUIRE_OPTIMAL_HELP)
    cor.add_argument(
        "--kernels", metavar="FILE.py",
        help="a Python file with kernels and CONFIGS; it is imported, so it runs with your privileges: "
        "give it only files you would run yourself",
    )  # fmt: skip
    cor.add_argument(
        "--allow-unknown",
        action="store_true",
        help="exit 0 even when a configuration did not compile, an access was not analysed or an optimum "
        "is unknown (default: exit 3)",
    )
    cor.add_argument("--workers", type=int, default=0, help="compile processes (default: CPU count)")
    cor.add_argument(
        "--engine", choices=["local", "ray"], default="local",
        help="where compiles run: worker processes here (default) or Ray tasks (needs bankproof[ray])",
    )  # fmt: skip
    cor.add_argument("--address", help="the Ray cluster to join (HOST:6379; default: a local Ray)")
    cor.add_argument(
        "--results", metavar="DIR",
        help="keep one result per compile here: reruns compute only what changed; interrupted ones resume",
    )  # fmt: skip
    cor.add_argument(
        "--expand", type=int, default=0, metavar="N",
        help="expand the configurations into up to N variants (block sizes, warps, stages, dtypes)",
    )  # fmt: skip
    cor.add_argument("--seed", type=int, default=0, help="the expansion's seed (default 0)")
    cor.add_argument(
        "--compile-timeout",
        type=float,
        default=300.0,
        help="seconds per compile; one past it is reported as not compiled (default 300)",
    )
    cfmt = cor.add_mutually_exclusive_group()
    json_flag(cfmt, "machine-readable report")
    cfmt.add_argument(
        "--sarif", action="store_true", help="SARIF 2.1.0 for code-scanning tools (with the ledger findings)"
    )
    cor.add_argument("--sarif-root", metavar="DIR", help=SARIF_ROOT_HELP)
    cor.add_argument(
        "--verbose", action="store_true", help="also list the ledger's instructions that are not counted"
    )
