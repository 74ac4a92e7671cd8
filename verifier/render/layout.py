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


BANK_COLUMNS = 16  # columns per block of the bank table: a row stays within 110 characters


def _bank_lines(banks: np.ndarray) -> list[str]:
    """The bank table, wide tables in blocks of :data:`BANK_COLUMNS` columns.

    >>> lines = _bank_lines(np.zeros((2, 40), dtype=int))
    >>> len(lines), max(map(len, lines))
    (12, 100)
    """
    if banks.ndim != 2:
        flat = [f"B{b:02d}" for b in banks.reshape(-1)]
        return ["  " + " ".join(flat[i : i + BANK_COLUMNS]) for i in range(0, len(flat), BANK_COLUMNS)]
    rows, cols = banks.shape
    out = []
    for c0 in range(0, cols, BANK_COLUMNS):
        block = range(c0, min(cols, c0 + BANK_COLUMNS))
        if cols > BANK_COLUMNS:
            out.append(f"columns c{block[0]}-c{block[-1]}:")
        out.append("       " + "".join(f"c{c:<4d} " for c in block).rstrip())
        for r in range(rows):
            cells = "".join(f"B{b:02d}   " for b in banks[r, block[0] : block[-1] + 1])
            out.append((f"r{r:<4d}  " + cells).rstrip())
    return out
