"""A kernel's shared-memory account drawn: text (per source line, the conflicts with their lanes,
the totals as Nsight Compute's SASS-level counters count them), SARIF 2.1.0 (one result per
conflicting or undecided line, at the user's line) and an HTML page.

>>> from bankproof.verifier.kernel.records import KernelResult
>>> r = KernelResult(1, "k.cu", "k", "sm90", {"block": [32, 1, 1]}, "proved", (), (), (), (), (), {}, 3)
>>> to_text(r).splitlines()[0]
'k.cu: kernel k on sm90, block 32x1x1, CTA (0, 0, 0): proved'
"""

from __future__ import annotations

from bankproof.verifier.kernel.records import InstructionReport, KernelResult
from bankproof.verifier.render import answer, sarif
from bankproof.verifier.render.safe import escape

RULES = {
    "BPK001": "a shared-memory instruction costs more wavefronts than its ideal (bank conflicts)",
    "BPK002": "a shared-memory instruction's cost could not be decided",
    "BPK003": "a shared-memory address is misaligned for its instruction (the hardware faults)",
}


def _n(v) -> str:
    return "?" if v is None else str(v)


def _loc(r: InstructionReport) -> str:
    where = f"{r.location.file}:{r.location.line}" if r.location else "?"
    return where


def to_text(r: KernelResult) -> str:
    """What ``bankproof kernel`` prints."""
    block = "x".join(str(x) for x in r.launch.get("block", []))
    cta = tuple(r.launch.get("cta", [0, 0, 0]))
    out = [f"{r.source}: kernel {r.kernel} on {r.arch}, block {block}, CTA {cta}: {r.verdict}"]
    if r.lines:
        names = [len(f"{ln.location.file}:{ln.location.line}") for ln in r.lines if ln.location]
        wide = min(72, max([32, *names]))
        out.append(f"  {'line':<{wide}} kinds        executed  wavefronts  ideal  verdict")
    for ln in r.lines:
        where = f"{ln.location.file}:{ln.location.line}" if ln.location else "?"
        kinds = ",".join(ln.kinds)
        out.append(
            f"  {where[-wide:]:<{wide}} {kinds:<12} {_n(ln.instructions):>8}  {_n(ln.wavefronts):>10}  "
            f"{_n(ln.ideal):>5}  {ln.verdict}"
        )
    shown: dict = {}
    for i in r.instructions:  # per source line: its first undecided or conflicting instruction
        if i.verdict == "proved" or (i.verdict == "unknown" and i.rests_on == "not modelled"):
            continue
        key = (i.location.file, i.location.line) if i.location else ("", i.ptx_line)
        shown.setdefault(key, []).append(i)
    for group in shown.values():
        i = group[0]
        head = f"  {_loc(i)} {i.opcode} (PTX line {i.ptx_line})"
        if i.inlined_from is not None:
            head += f", inlined from {i.inlined_from.file}:{i.inlined_from.line}"
        more = (
            f"; {len(group) - 1} more instruction{'s' * (len(group) > 2)} of this line too"
            if len(group) > 1
            else ""
        )
        if i.conflict is not None:
            c = i.conflict
            said = f"{answer.cost(i.answer)}  {answer.state(i.answer)}  {answer.decided(i.answer)}".rstrip()
            out.append(f"{head}: {said}{more}")
            out.append(
                f"    warp {c.warp}, execution {c.execution}: lanes {c.lanes[0]} and {c.lanes[1]} (threads "
                f"{c.threads[0]}, {c.threads[1]}) hit bank {c.bank} at bytes {c.byte_addresses[0]} and "
                f"{c.byte_addresses[1]} ({c.wavefronts} wavefronts, ideal {c.ideal})"
            )
            out.append(
                f"    reproduce: {c.reproduce if len(c.reproduce) < 400 else c.reproduce[:400] + '...'}"
            )
        else:
            out.append(f"{head}: {i.verdict}: {i.reason or i.rests_on}{more}")
        if i.fix:
            out.append(f"    fix: {i.fix}")
    if r.descriptors:
        bad = [d for d in r.descriptors if d.verdict != "proved"]
        good = len(r.descriptors) - len(bad)
        out.append(
            f"  wgmma descriptors: {good} of {len(r.descriptors)} read their TMA tiles as written (agree)"
        )
        for d in bad[:8]:
            where = f"{d.location.file}:{d.location.line}" if d.location else f"PTX line {d.ptx_line}"
            out.append(f"    {where} operand {d.operand} {d.descriptor} ({d.decoded}): {d.verdict}: "
                       f"{d.mismatch or d.reason}")  # fmt: skip
    if r.measured:
        bad = [m for m in r.measured if not m.agrees]
        good = len(r.measured) - len(bad)
        out.append(f"  measured (Nsight Compute source view): {good} of {len(r.measured)} lines as predicted")
        for m in bad:
            want = (
                "no instruction"
                if not m.modelled and m.executed_high == 0
                else (
                    f"{m.executed_low}..{m.executed_high} executed, {_n(m.predicted_wavefronts)} wavefronts"
                )
            )
            got = f"measured {m.executed} executed, {m.wavefronts} wavefronts"
            out.append(f"    {m.file}:{m.line} {m.kind}: {got}; predicted {want}")
    if r.totals:
        out.append("  totals (SASS-level counters):")
        for t in r.totals:
            counts = f"{_n(t.instructions):>8} instructions  {_n(t.wavefronts):>8} wavefronts"
            within = f", within {t.range[0]}..{t.range[1]}" if t.range else ""
            out.append(f"    {t.kind:<9} {counts} (ideal {_n(t.ideal)}{within})")
    out += [f"  unknown: {u}" for u in r.unknown]
    out += [f"  note: {n}" for n in r.notes]
    return "\n".join(out)


def _sarif_location(i: InstructionReport) -> dict:
    loc = i.location
    uri = loc.file if loc else "<ptx>"
    region = {"startLine": max(1, loc.line if loc else i.ptx_line)}
    if loc and loc.column:
        region["startColumn"] = loc.column
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}


def to_sarif(r: KernelResult) -> dict:
    """SARIF 2.1.0: one result per instruction above its ideal, misaligned, or undecided."""
    results = []
    for i in r.instructions:
        if i.verdict == "proved" or (i.verdict == "unknown" and i.rests_on == "not modelled"):
            continue
        if i.rests_on == "misaligned":
            rule, text = "BPK003", f"{i.opcode}: {i.reason}"
        elif i.conflict is not None:
            c = i.conflict
            rule = "BPK001"
            text = (f"{i.opcode}: {_n(i.wavefronts)} wavefronts, ideal {_n(i.ideal)}; warp {c.warp} lanes "
                    f"{c.lanes[0]} and {c.lanes[1]} hit bank {c.bank} at bytes {c.byte_addresses[0]} and "
                    f"{c.byte_addresses[1]}")  # fmt: skip
            if i.fix:
                text += f"; fix: {i.fix}"
        else:
            rule, text = "BPK002", f"{i.opcode}: {i.reason or 'not decided'}"
        results.append({"ruleId": rule, "level": "warning", "message": {"text": text},
                        "locations": [_sarif_location(i)]})  # fmt: skip
    driver = sarif.driver({k: (v, v) for k, v in RULES.items()}, sarif.KERNEL_HELP)
    return {
        "$schema": sarif.SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def to_html(r: KernelResult) -> str:
    """A page: the verdict, the per-line table and every conflict, everything escaped."""
    rows = []
    for ln in r.lines:
        where = f"{ln.location.file}:{ln.location.line}" if ln.location else "?"
        rows.append(
            f"<tr class='{escape(ln.verdict)}'><td>{escape(where)}</td><td>{escape(','.join(ln.kinds))}</td>"
            f"<td>{escape(_n(ln.instructions))}</td><td>{escape(_n(ln.wavefronts))}</td>"
            f"<td>{escape(_n(ln.ideal))}</td><td>{escape(ln.verdict)}</td></tr>"
        )
    text = escape(to_text(r))
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>bankproof kernel</title>"
        "<style>body{font-family:sans-serif}pre,td{font-family:monospace}.refuted{background:#fdd}"
        ".unknown{background:#ffd}td{padding:2px 8px}</style></head><body>"
        f"<h1>{escape(r.kernel)}: {escape(r.verdict)}</h1>"
        "<table><tr><th>line</th><th>kinds</th><th>executed</th><th>wavefronts</th><th>ideal</th>"
        f"<th>verdict</th></tr>{''.join(rows)}</table><pre>{text}</pre></body></html>\n"
    )
