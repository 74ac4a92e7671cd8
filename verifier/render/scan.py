"""Triton scan and corpus results drawn: text, and SARIF 2.1.0 for code-scanning tools (results
at the Python source line from ``loc(...)`` when present).
"""

from __future__ import annotations

from bankproof.verifier.render import answer
from bankproof.verifier.triton.accesses import provenance
from bankproof.verifier.triton.ledger_records import ClassTotal, LedgerReport
from bankproof.verifier.triton.results import CorpusResult, ScanResult
from bankproof.verifier.triton.scan_records import AccessRow, Location


def _copy16(row: AccessRow) -> bool:
    """A 16-byte cp.async copy, whose count is an assumption on any arch (see ``provenance``)."""
    return row.instr is not None and provenance(row.op, row.instr) == "assumed"


def _where(loc: Location) -> str:
    src = f"{loc.source}:{loc.line}" if loc.source is not None else ""
    return f"{loc.ttgir}:{loc.ttgir_line}" + (f" ({src})" if src else "")


def to_text(result: ScanResult) -> str:
    lines = []
    for rep in result.reports:
        rows = [a for b in rep.buffers for a in b.accesses]
        assumed = any(a.rests_on == "assumed" and not _copy16(a) for a in rows)
        status = ", its rules assumed (not measured on this arch)" if assumed else ""
        lines.append(f"{rep.file}: target {rep.target}, {rep.num_warps} warps{status}")
        for b in rep.buffers:
            opt = b.optimal_wavefronts
            gap = b.gap
            verdict = "optimal" if gap == 0 else f"gap {gap}" if gap is not None else "optimum unknown"
            lines.append(
                f"  buffer {b.shown} {'x'.join(map(str, b.shape))} {b.dtype} {b.shared}: "
                f"{b.wavefronts} wavefronts, optimum {opt if opt is not None else '?'} ({verdict})"
            )
            for a in b.accesses:
                cost = (
                    f"{a.wavefronts} wavefronts (ideal {a.ideal}) with {a.instructions} x {a.instr}"
                    if a.wavefronts is not None
                    else f"not analysed: {a.error}"
                )
                if a.wavefronts is not None and a.engines:  # answered by the engines: how they decided
                    cost = (
                        f"{answer.cost(a.answer)} with {a.instructions} x {a.instr}  {answer.state(a.answer)}"
                    )
                    cost += f"  {answer.decided(a.answer)}"
                mark = " [assumed: 16-byte cp.async]" if _copy16(a) and a.rests_on == "assumed" else ""
                mark += f" [width: {a.width_assumed}]" if a.width_assumed else ""
                lines.append(f"    {a.kind:5} {a.op:<34} {cost}  at {_where(a.location)}{mark}")
            w = b.better_writer
            if w and w.layout is not None:
                lanes = [list(v) for v in w.layout["lane"]]
                lines.append(
                    f"    better writer (equally coalesced, {w.searched} searched): lanes {lanes} with "
                    f"{w.instr}: {w.per_access} per access, {w.wavefronts} in all, on {w.shared}"
                )
            if b.better_layout:
                lines.append(f"    better: {b.better_layout}")
            elif b.gap is None and b.reason:
                lines.append(f"    ({b.reason})")
        for c in rep.conversions:
            if c.shared_plan is not None:
                p = c.shared_plan
                lines.append(
                    f"  convert_layout at {_where(c.location)}: through shared memory at best "
                    f"{p.store.wavefronts} + {p.load.wavefronts} wavefronts with {p.layout}"
                )
            else:
                lines.append(f"  convert_layout at {_where(c.location)}: {c.error}")
        lines += ledger_lines(rep.ledger, "  ")
        if not rep.buffers and not rep.conversions and (rep.ledger is None or not rep.ledger.entries):
            lines.append("  no shared-memory buffers, accesses or layout conversions: nothing to count")
    return "\n".join(lines) + "\n"


def corpus_text(result: CorpusResult, archs: list[str], verbose: bool = False) -> str:
    """The corpus per arch and configuration: buffers, their costs, and the ledger (its "not
    counted" lines only when ``verbose``)."""
    entries = result.entries
    lines = []
    for arch in archs:
        mine = [e for e in entries if e.arch == arch]
        ok = [e for e in mine if e.report is not None]
        lines.append(f"{arch}: {len(mine)} configurations, {len(ok)} compiled")
        for e in mine:
            rep = e.report
            if rep is None:
                lines.append(f"  {e.config}: not compiled ({e.error})")
                continue
            lines.append(f"  {e.config}: {len(rep.buffers)} buffers, {len(rep.conversions)} conversions")
            for b in rep.buffers:
                gap = b.gap
                verdict = "optimal" if gap == 0 else f"gap {gap}" if gap is not None else "optimum unknown"
                costs = ", ".join(
                    f"{a.kind} {a.wavefronts}/{a.ideal} {a.instr}" if a.wavefronts is not None else "n/a"
                    for a in b.accesses
                )
                lines.append(f"    {b.shown} {b.shared}: {b.wavefronts} ({verdict}) [{costs}]")
            lines += ledger_lines(e.ledger, verbose=verbose)
            d = e.descriptors
            if d:
                left = f", {d.undecided} not constant" if d.undecided else ""
                note = f" ({d.note})" if d.note is not None else ""
                lines.append(f"    MMA descriptors: {d.agree} of {d.checked} equal their nvmma_shared "
                             f"operand{left}{note}")  # fmt: skip
    return "\n".join(lines) + "\n"


def corpus_summary(result: CorpusResult, code: int) -> str:
    """The closing line: what was compiled and counted, what is worse or unchecked, the exit code.

    >>> from bankproof.verifier.triton.results import CorpusResult
    >>> from bankproof.verifier.triton.corpus_records import CorpusEntry
    >>> r = CorpusResult(1, (CorpusEntry(config="k", arch="sm90", error="x"),), (), (), ("u",))
    >>> print(corpus_summary(r, 3))  # doctest: +NORMALIZE_WHITESPACE
    triton corpus: 1 configurations, 0 compiled (1 not), 0 accesses counted, no baseline compared,
    1 not checked: exit 3
    """
    entries = result.entries
    ok = [e.report for e in entries if e.report is not None]
    counted = sum(1 for rep in ok for b in rep.buffers for a in b.accesses if a.wavefronts is not None)
    failed = len(entries) - len(ok)
    compiled = f"{len(ok)} compiled" + (f" ({failed} not)" if failed else "")
    again = (
        f", {len(result.recomputed)} stored entries not trusted (computed again)" if result.recomputed else ""
    )
    compared = "no baseline compared"
    if result.compared:
        compared = f"{len(result.worse)} worse than baseline" + (
            f", {len(result.removed)} removed since it" if result.removed else ""
        )
    return (
        f"triton corpus: {len(entries)} configurations, {compiled}, {counted} accesses counted, "
        f"{compared}, {len(result.unchecked)} not checked{again}: exit {code}"
    )


def ledger_lines(led: LedgerReport | None, indent: str = "    ", verbose: bool = True) -> list[str]:
    """The whole-kernel ledger, one line per entry: where, op, kind, instruction, instructions per
    CTA execution x executions, wavefronts (ideal) per execution, or (``verbose``) why it is not
    counted.

    >>> from bankproof.verifier.triton.ledger_records import LedgerEntry
    >>> e = LedgerEntry(location="k.py:7:3", family="lsu", instr="st32", ptx_lines=(3,),
    ...     instructions_per_warp=1, instructions=4, loops=None, executions=None, chain=(),
    ...     sass_lines=(), op="tt.reduce", kind="scratch", counted=True, wavefronts=4, ideal=4)
    >>> ledger_lines(LedgerReport(entries=(e,)))
    ['    ledger: k.py:7:3 tt.reduce (scratch) st32 x4 per iteration: 4 wavefronts (ideal 4)']
    """
    if not led:
        return []
    out = []
    for x in led.entries:
        runs = "per iteration" if x.executions is None else f"x{x.executions}"
        what = f"{x.op} ({x.kind}) {x.instr} x{x.instructions}"
        arm = f" if {' and '.join(x.condition)}" if x.condition else ""
        arm = f" (not run: {x.not_run})" if x.not_run else arm
        head = f"{indent}ledger: {x.location} {what} {runs}{arm}"
        if x.counted:
            out.append(f"{head}: {x.wavefronts} wavefronts (ideal {x.ideal})")
        elif verbose:
            out.append(f"{head}: not counted ({x.reason or 'unknown'})")
    out += [f"{indent}ledger: unattributed {u}" for u in led.unattributed]
    if led.totals:
        out.append(f"{indent}ledger totals per CTA: " + "; ".join(
            f"{cls} {_total(t)}" for cls, t in led.totals.items()))  # fmt: skip
    if led.launch is not None:
        whole = led.launch
        if whole.totals is not None:
            said = "; ".join(f"{cls} {_total(t)}" for cls, t in whole.totals.items()) or "none"
            out.append(f"{indent}ledger totals for the launch ({whole.ctas} CTAs, {whole.how}): {said}")
        else:
            out.append(f"{indent}ledger totals for the launch ({whole.ctas} CTAs): not known: {whole.why}")
    for u in led.unknowns or ():
        out.append(f"{indent}ledger: {u.name} = the trips (an integer >= 0) of {u.bounds}: {u.why}; "
                   f"--arg {u.name}=N evaluates the totals")  # fmt: skip
    if led.incomplete is not None:
        why = led.incomplete
        more = f" (+{len(why) - 1} more)" if len(why) > 1 else ""
        out.append(f"{indent}ledger: not complete: {why[0]}{more}" if why else f"{indent}ledger: complete")
    return out


def _total(t: ClassTotal) -> str:
    """``256 wavefronts / 64 instructions``, ``16..48 wavefronts (depends on M % 64 == 0)`` or ``unknown``."""
    if t.wavefronts is not None:
        return f"{t.wavefronts} wavefronts / {t.instructions} instructions"
    dep = f" (depends on {', '.join(t.depends_on)})" if t.depends_on else ""
    if t.range:
        (lo, hi), ins = t.range.wavefronts, t.range.instructions
        return f"{lo}..{hi} wavefronts" + (f" / {ins[0]}..{ins[1]} instructions" if ins else "") + dep
    if t.formula:
        return f"{t.formula.wavefronts} wavefronts / {t.formula.instructions} instructions"
    return f"unknown{dep}"
