"""``bankproof layout``'s text: kind, validity, bases, notations, the bank table."""

from __future__ import annotations

import json

import numpy as np
from bankproof.verifier.results import LayoutResult


def to_text(r: LayoutResult) -> str:
    """Human-readable text of a layout's description."""
    report = r.to_dict()
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
        args = ", ".join(report["dim_names"])
        lines.append(f"formula:  offset({args}) = {notations['formula']}")
    if "cute" in notations:
        lines.append(f"cute:     {notations['cute']}   (element units)")
    if "swizzled_shared" in notations:
        lines.append(f"triton:   {notations['swizzled_shared']}")
    if "triton" in notations:
        lines.append(f"triton:   {notations['triton']}")
    lines += [f"warning:  {w}" for w in report.get("warnings", ())]
    lines += [f"note:     {n}" for n in report.get("notes", ())]
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
