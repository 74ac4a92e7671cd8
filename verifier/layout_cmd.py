"""``bankproof layout``: a layout's kind, validity, bases and equivalent notations."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from bankproof.models import dtypes, hardware
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import ParsedLayout, memory_notations, parse_layout


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.dims.split(",")] if args.dims else None
    if names is not None and not all(n.isidentifier() for n in names):
        raise InputError("layout", "--dims", "must be identifiers separated by commas", args.dims)
    parsed = parse_layout(
        args.notation, args.shape, dtype=args.dtype, units=args.units, base_align=args.base_align, names=names
    )
    if args.dtype:
        dtypes.bits(args.dtype)
    report = describe(parsed)
    if args.banks:
        if parsed.kind != "memory":
            raise InputError("layout", "--banks", "needs a memory layout")
        report["dtype"] = args.dtype or "f32"
        report["banks"] = bank_table(parsed.layout, dtypes.bits(report["dtype"]) // 8).tolist()
    if args.json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        sys.stdout.write(render(report, parsed))
    return 0


def describe(parsed: ParsedLayout) -> dict:
    """The JSON report (schema 1) of a parsed layout."""
    lay = parsed.layout
    lin = lay.linear if isinstance(lay, PaddedLayout) else lay
    report: dict = {
        "schema": 1,
        "notation": parsed.notation,
        "kind": parsed.kind,
        "in_dims": _in_dims(lin, parsed.kind),
        "out_dims": dict(lin.out_dims),
        "dim_names": list(parsed.names),
        "linear": not isinstance(lay, PaddedLayout),
    }
    if isinstance(lay, PaddedLayout):
        report["padding"] = [list(p) for p in lay.intervals]
        report["span_elements"] = lay.span()
    violations = lin.distributed_violations() if parsed.kind == "distributed" else lin.memory_violations()
    report["valid"] = not violations
    report["violations"] = violations
    report["injective"] = lin.is_injective()
    report["surjective"] = lin.is_surjective()
    if parsed.kind == "distributed":
        report["broadcast"] = {d: lin.zero_bases(d) for d in lin.in_dim_names if lin.zero_bases(d)}
        report["contiguous_registers"] = lin.contiguous_registers()
    elif not isinstance(lay, PaddedLayout):
        report["notations"] = memory_notations(lin, parsed.names)
    return report


def _in_dims(lin: LinearLayout, kind: str) -> dict:
    d = lin.as_dict()
    if kind == "distributed":
        return {k: d.get(k, []) for k in ("register", "lane", "warp", "block")}
    return {k: v for k, v in d.items() if k == "offset" or v}


def bank_table(layout: LinearLayout | PaddedLayout, elem_bytes: int) -> np.ndarray:
    """Bank of every element, as an array of the tensor's shape (dim0 first)."""
    if isinstance(layout, PaddedLayout):
        lin = layout.linear
        phys = layout.physical_offsets()
        coords = lin.table()
        off = np.zeros([s for _, s in lin.out_dims], dtype=np.int64)
        off[tuple(coords.T)] = phys
    else:
        lin = layout.transpose_ins(["offset"] + [d for d in layout.in_dim_names if d != "offset"])
        lin = LinearLayout((("offset", lin.in_bases("offset")),), lin.out_dims)
        coords = lin.table()
        off = np.zeros([s for _, s in lin.out_dims], dtype=np.int64)
        off[tuple(coords.T)] = np.arange(len(coords))
    return hardware.bank(off * elem_bytes)


def render(report: dict, parsed: ParsedLayout) -> str:
    """Human-readable text of :func:`describe`'s report."""
    shape = "x".join(str(s) for s in report["out_dims"].values())
    ins = ", ".join(report["in_dims"])
    lines = [
        f"notation: {report['notation']}",
        f"kind:     {report['kind']} ({ins} -> {', '.join(report['out_dims'])}), "
        f"{'linear' if report['linear'] else 'not linear (padded)'}",
        f"shape:    {shape} (dims {', '.join(report['dim_names'])})",
    ]
    definition = "Def 4.10" if report["kind"] == "distributed" else "Def 4.14"
    if report["valid"]:
        lines.append(f"valid:    yes ({definition})")
    else:
        lines.append(f"valid:    no ({definition}): " + "; ".join(report["violations"]))
    lines.append("bases:")
    for dim, bases in report["in_dims"].items():
        lines.append(f"  {dim + ':':9} {json.dumps(bases)}")
    if "padding" in report:
        pads = ", ".join(f"{i}:+{p}" for i, p in report["padding"])
        lines.append(f"padding:  [{pads}] (elements), span {report['span_elements']} elements")
    if report["kind"] == "distributed":
        bc = report["broadcast"]
        lines.append("broadcast: " + (", ".join(f"{d} bits {v}" for d, v in bc.items()) if bc else "none"))
        lines.append(
            f"contiguous registers along {list(report['out_dims'])[-1]}: {report['contiguous_registers']}"
        )
    notations = report.get("notations", {})
    if "formula" in notations:
        args = ", ".join(parsed.names)
        lines.append(f"formula:  offset({args}) = {notations['formula']}")
    if "cute" in notations:
        lines.append(f"cute:     {notations['cute']}   (element units)")
    if "swizzled_shared" in notations:
        lines.append(f"triton:   {notations['swizzled_shared']}")
    if "triton" in notations:
        lines.append(f"triton:   {notations['triton']}")
    if "banks" in report:
        lines.append(f"banks ({report['dtype']}, bank = (byte address / 4) mod 32):")
        lines.extend(_bank_lines(np.asarray(report["banks"])))
    return "\n".join(lines) + "\n"


def _bank_lines(banks: np.ndarray) -> list[str]:
    if banks.ndim != 2:
        return ["  " + " ".join(f"B{b:02d}" for b in banks.reshape(-1))]
    rows, cols = banks.shape
    out = ["       " + "".join(f"c{c:<4d} " for c in range(cols)).rstrip()]
    for r in range(rows):
        out.append((f"r{r:<4d}  " + "".join(f"B{b:02d}   " for b in banks[r])).rstrip())
    return out
