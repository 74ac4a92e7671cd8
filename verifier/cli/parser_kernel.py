"""``bankproof kernel`` on the command line's parser: the launch, the compile and the outputs."""

from __future__ import annotations

from bankproof.verifier.cli.flags import DEFAULT_ARCH, arch_flag, command, engine_flag, json_flag


def add_kernel(sub) -> None:
    """Add ``bankproof kernel`` to ``sub`` (the top-level subparsers)."""
    ker = command(
        sub,
        "kernel",
        help="any CUDA kernel (CUDA C++ compiled here by NVRTC, or PTX from any compiler): every "
        "shared-memory instruction's wavefronts over one CTA",
        description="Read a kernel once (a .cu file compiled here by NVRTC with CUTLASS/CuTe and CUB "
        "headers from their wheels, or a .ptx file from nvcc, NVRTC, Triton, the CuTe DSL, tilelang, ...), "
        "run one CTA of the launch you state (block, grid and CTA, dynamic shared memory, arguments, "
        "pointers included) thread by thread, and count every shared-memory instruction's wavefronts over "
        "all its dynamic instances: per instruction a verdict and the first conflicting lanes, per source "
        "line and per kernel the totals as Nsight Compute's SASS-level counters count them. What depends on "
        "values it cannot know is unknown, never a number. Exit 0 conflict-free, 1 conflicts (or a "
        "misaligned or out-of-bounds address, or a wgmma descriptor reading a TMA tile from the wrong "
        "bytes), 2 input error, 3 unknown, 4 the engines (or a measured --ncu profile) disagree.",
    )
    ker.add_argument("file", metavar="FILE.cu|FILE.ptx", help="the kernel's CUDA C++ or PTX")
    ker.add_argument("--kernel", help="which kernel of the module (required when it has several)")
    ker.add_argument("--block", default="128", help="threads per CTA: X, XxY or XxYxZ (default 128)")
    ker.add_argument("--grid", default="1", help="CTAs of the launch: X, XxY or XxYxZ (default 1)")
    ker.add_argument("--cta", default="0,0,0", help="the CTA analysed: X[,Y[,Z]] (default 0,0,0)")
    ker.add_argument(
        "--dynamic-smem",
        type=int,
        default=0,
        metavar="BYTES",
        help="dynamic shared memory of the launch (default 0)",
    )
    ker.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="a kernel argument: its C++ name, PTX name or position; pointers too (an address)",
    )
    ker.add_argument(
        "--buffer",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="what a pointer argument points to: FILE.npy, raw bytes FILE[:DTYPE], or null; loads read it",
    )
    ker.add_argument("--open", metavar="NAME=LO..HI[:STEP]", help="an argument over a range (<= 1024 values, "
                     "each run): proved for all, or refuted at the smallest")  # fmt: skip
    ker.add_argument(
        "-I",
        "--include",
        action="append",
        default=[],
        metavar="DIR",
        help="an include folder for NVRTC (CUTLASS/CuTe, CUB come from their wheels)",
    )
    ker.add_argument(
        "-D",
        "--define",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="a preprocessor definition for NVRTC",
    )
    ker.add_argument("--tensor-map", action="append", default=[], metavar="NAME=MODE,ROWSxCOLS,DTYPE",
                     help="a TMA tensor map the kernel takes (tmA=128B,64x64,bf16): its boxes are checked "
                     "against the wgmma descriptors that read them")  # fmt: skip
    ker.add_argument("--ncu", metavar="EXPORT.csv",
                     help="a launch's Nsight Compute source page (ncu -i REP --page source --csv "
                     "--print-source cuda,sass, with --section SourceCounters): joined line by line; "
                     "exit 4 where a modelled line differs")  # fmt: skip
    ker.add_argument("--language", choices=["cuda", "ptx"], help="override the file suffix")
    arch_flag(ker, f"target arch (default {DEFAULT_ARCH}; CUDA is compiled for it)")
    ker.add_argument("--max-steps", type=int, default=3_000_000, help="machine steps before giving up")
    ker.add_argument("--time-limit", type=float, default=120.0, help="seconds of analysis before giving up")
    ker.add_argument("--html", metavar="PAGE", help="also write an HTML page")
    engine_flag(ker, "the engines that answer an instruction whose addresses make a layout, beside the "
                "enumeration of its instances (default all; enum: the enumeration alone)")  # fmt: skip
    kfmt = ker.add_mutually_exclusive_group()
    json_flag(kfmt, "machine-readable report")
    kfmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code-scanning tools")
