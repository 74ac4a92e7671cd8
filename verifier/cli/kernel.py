"""``bankproof kernel FILE``: any CUDA kernel's shared-memory account (see
:mod:`bankproof.verifier.api.kernel`); text, ``--json``, ``--sarif`` and ``--html PAGE``.

>>> import argparse, io
>>> from bankproof.verifier.cli.parser import build_parser
>>> a = build_parser().parse_args(["kernel", "k.ptx", "--arg", "n=4", "--block", "32x8"])
>>> a.block, a.arg
('32x8', ['n=4'])
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TextIO

from bankproof.models.errors import InputError

WHERE = "kernel"


def _pairs(items: list[str], flag: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        m = re.fullmatch(r"\s*([\w$]{1,200})\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*", item)
        if not m:
            raise InputError(WHERE, flag, "must be NAME=INTEGER (a parameter's name or position)", item)
        if m.group(1) in out:
            raise InputError(WHERE, flag, "gives one parameter twice", m.group(1))
        out[m.group(1)] = int(m.group(2), 0)
    return out


def _tensor_maps(items: list[str]) -> dict[str, dict]:
    """``NAME=MODE,ROWSxCOLS,DTYPE`` (``tmA=128B,64x64,bf16``) -> ``{NAME: {tma, box, dtype}}``."""
    out: dict[str, dict] = {}
    for item in items:
        m = re.fullmatch(
            r"\s*([\w$]{1,200})\s*=\s*(none|32B|64B|128B)\s*,\s*(\d{1,4})x(\d{1,4})\s*,\s*(\w{1,16})\s*", item
        )
        if not m:
            raise InputError(
                WHERE, "--tensor-map", "must be NAME=MODE,ROWSxCOLS,DTYPE (tmA=128B,64x64,bf16)", item
            )
        if m.group(1) in out:
            raise InputError(WHERE, "--tensor-map", "gives one tensor map twice", m.group(1))
        out[m.group(1)] = {"tma": m.group(2), "box": [int(m.group(3)), int(m.group(4))], "dtype": m.group(5)}
    return out


def _defines(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if name in out and out[name] != value:
            raise InputError(WHERE, "--define", "gives one name two values", name)
        out[name] = value
    return out


def _with_measurement(result, path: str):
    """The result with a measured source view joined (exit 4 where a modelled line differs)."""
    from dataclasses import replace

    from bankproof.gpu_checks.source_page import read_export
    from bankproof.models.files import TEXT_BYTES, read_text
    from bankproof.verifier.kernel.measured import join

    try:
        rows = read_export(read_text(path, TEXT_BYTES, WHERE, "--ncu"))
    except InputError as e:
        raise InputError(WHERE, "--ncu", e.problem, e.value) from None
    functions = {r.function for r in rows if r.function}
    mine = [r for r in rows if _same_function(r.function, result.kernel)]
    if functions and not mine:
        names = ", ".join(sorted(functions)[:4])
        raise InputError(WHERE, "--ncu", f"is an export of {names}, not of kernel {result.kernel}", path)
    lines = tuple(join(result, mine if functions else rows))
    verdict = "disagree" if any(not m.agrees for m in lines) else result.verdict
    return replace(result, measured=lines, verdict=verdict)


def _same_function(function: str, kernel: str) -> bool:
    """Whether an export's function name (demangled, maybe with its parameters) is ``kernel``
    (the PTX name: ``extern "C"`` names equal, mangled ones hold the length-prefixed name).

    >>> _same_function("transpose(float *, int)", "_Z9transposePfi"), _same_function("k2", "k")
    (True, False)
    """
    name = function.split("(", 1)[0].strip().split("::")[-1].split("<", 1)[0].split()[-1:] or [""]
    base = name[0]
    return bool(function) and (function == kernel or base == kernel or f"{len(base)}{base}" in kernel)


def kernel(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from bankproof.verifier.api.kernel import kernel as run
    from bankproof.verifier.api.kernel import read_specs, spec_paths
    from bankproof.verifier.cli.commands import check_writable, write_output
    from bankproof.verifier.render import kernel as render

    if args.html is not None:
        check_writable(WHERE, "--html", args.html, (args.file, args.ncu or "", *spec_paths(args.buffer)))
    if args.max_steps < 1:
        raise InputError(WHERE, "--max-steps", "must be positive", args.max_steps)
    if args.open is not None:
        return _open(args, out)
    result = run(
        args.file, block=args.block, kernel=args.kernel, grid=args.grid, cta=args.cta,
        dynamic_smem=args.dynamic_smem, args=_pairs(args.arg, "--arg"), include=tuple(args.include),
        defines=_defines(args.define), language=args.language, arch=args.arch, max_steps=args.max_steps,
        time_limit=args.time_limit, tensor_maps=_tensor_maps(args.tensor_map), engines=args.engine,
        buffers=read_specs(args.buffer),
    )  # fmt: skip
    if args.ncu:
        result = _with_measurement(result, args.ncu)
    if args.html:
        write_output(WHERE, "--html", args.html, render.to_html(result))
    if args.json:
        out.write(result.to_json())
    elif args.sarif:
        out.write(json.dumps(render.to_sarif(result), indent=1) + "\n")
    else:
        out.write(render.to_text(result) + "\n")
    return result.exit_code


def _open(args: argparse.Namespace, out: TextIO) -> int:
    """``--open NAME=LO..HI[:STEP]``: the kernel for every value of one argument."""
    from bankproof.verifier.api.kernel import read_specs
    from bankproof.verifier.api.kernel_open import kernel_open
    from bankproof.verifier.render.kernel_open import to_text

    for flag, given in (("--ncu", args.ncu), ("--html", args.html), ("--sarif", args.sarif),
                        ("--tensor-map", args.tensor_map)):  # fmt: skip
        if given:
            raise InputError(WHERE, flag, "is not taken with --open (one run per value)")
    result = kernel_open(
        args.file, args.open, block=args.block, kernel=args.kernel, grid=args.grid, cta=args.cta,
        dynamic_smem=args.dynamic_smem, args=_pairs(args.arg, "--arg"), include=tuple(args.include),
        defines=_defines(args.define), language=args.language, arch=args.arch, max_steps=args.max_steps,
        time_limit=args.time_limit, buffers=read_specs(args.buffer),
    )  # fmt: skip
    out.write(result.to_json() if args.json else to_text(result) + "\n")
    return result.exit_code
