"""Text for ``bankproof kernel --open``: per instruction its verdict over every value, the smallest
counterexample value with its lanes, and its cost by residue class (the CLI's stream escapes what a
user typed).

>>> from bankproof.verifier.api.kernel_open import OpenRange, OpenResult
>>> to_text(OpenResult(1, "k.cu", "k", OpenRange("n", 1, 4), 4, "proved", ())).splitlines()[-1]
'verdict: proved (exit 0)'
"""

from __future__ import annotations

from bankproof.verifier.api.kernel_open import OpenResult


def to_text(r: OpenResult) -> str:
    a = r.argument
    step = f" step {a.step}" if a.step > 1 else ""
    runs = f"{r.runs} value{'' if r.runs == 1 else 's'}, one CTA run for {'it' if r.runs == 1 else 'each'}"
    lines = [f"{r.source}: {r.kernel} with {a.name} over {a.lo}..{a.hi}{step} ({runs})"]
    for i in r.instructions:
        head = f"  {i.location} {i.instr} (PTX line {i.ptx_line}): "
        if i.verdict == "proved":
            (c,) = i.classes if len(i.classes) == 1 else (None,)
            cost = f" ({c.wavefronts} wavefronts, ideal {c.ideal})" if c else ""
            lines.append(f"{head}conflict-free for every value{cost}")
        elif i.verdict == "refuted":
            lines.append(f"{head}conflicts; the smallest value that does: {a.name}={i.smallest}")
            if i.conflict is not None:
                cx = i.conflict
                (l0, l1), (b0, b1) = cx.lanes, cx.byte_addresses
                where = f"warp {cx.warp}, lanes {l0} and {l1} hit bank {cx.bank} at bytes {b0} and {b1}"
                lines.append(f"    there: {where} ({cx.wavefronts} wavefronts, ideal {cx.ideal})")
        else:
            lines.append(f"{head}unknown at some values")
        if i.verdict != "proved" or len(i.classes) > 1:
            for c in i.classes:
                cost = "unknown" if c.wavefronts is None else f"{c.wavefronts} wavefronts (ideal {c.ideal})"
                count = "an unknown number of" if c.instructions is None else c.instructions
                lines.append(f"    {c.values}: {cost}, {count} instructions, {c.verdict}")
    lines += [f"  unknown: {u}" for u in r.unknown]
    lines.append(f"verdict: {r.verdict} (exit {r.exit_code})")
    return "\n".join(lines)
