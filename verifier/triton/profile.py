"""A measured profile explained line by line: Nsight Compute's source page of one kernel launch
(``ncu -i REP --page source --csv --print-source cuda,sass``: each source line of the kernel and
the SASS instructions under it, with ``Instructions Executed`` and the ``SourceCounters``
section's ``L1 Wavefronts Shared`` and ``... Ideal``) joined with the whole-kernel ledger by source
location. SASS carries the innermost location of an inlined call (``standard.py:314`` for a
``tl.sum``); a ledger entry owns every location of its ops' call chains, so each measured line goes
to the entries whose chains hold it.

Per line: the shared instructions executed and their measured wavefronts; the ledger's wavefronts
per execution times the executions measured (executed instructions over the entry's instructions
per execution), which replaces a static trip count; the ideal; and where the measured count is
above the ideal, the entry's op and instruction. Lines no entry owns are named as such. The
page itself is read by :mod:`bankproof.gpu_checks.source_page`.

>>> from bankproof.verifier.triton.ledger_records import LedgerReport
>>> explain(LedgerReport(), [SassRow("k.py", 7, "STS [R1], R2", 4, 16, 4)])[0].reason
'no ledger entry owns st instructions at this line'
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bankproof.gpu_checks.source_page import SassRow, sass_class
from bankproof.verifier.results import Result, optional
from bankproof.verifier.triton.ledger_records import LedgerEntry, LedgerReport
from bankproof.verifier.triton.ledger_totals import op_class
from bankproof.verifier.triton.measured_rules import GUARDED_CG_NOTE

NOT_MODELLED = {"gmma": "no wgmma of the ledger owns this line's operand reads (op_gmma)",
                "atom": "shared atomics at data-dependent addresses have no static count"}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Excess(Result):
    """Measured wavefronts above the ideal at a line, and the ops and instructions that own it."""

    wavefronts: int
    by: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ProfileLine(Result):
    """One measured source line and instruction class beside the ledger's prediction: modelled
    (``predicted_wavefronts`` at the executions measured, ``agrees``, a ``predicted_range`` where
    the count is one) or not (``reason``)."""

    location: str
    op_class: str = field(metadata={"key": "class"})
    executed: int
    measured_wavefronts: int | None
    measured_ideal: int
    modelled: bool
    reason: str | None = optional()
    entries: tuple[str, ...] | None = optional()
    predicted_wavefronts: int | float | None = optional()
    ideal: int | float | None = optional()
    executions_measured: float | None = optional()
    executed_static: int | None = optional()
    agrees: bool | None = optional()
    predicted_range: tuple[float, float] | None = optional()
    excess: Excess | None = optional()
    note: str | None = optional()

    def to_dict(self) -> dict:
        """The JSON: ``executed_static`` is ``null`` on a modelled line whose static count is unknown."""
        out = super().to_dict()
        if self.modelled and self.note is None and "executed_static" not in out:
            out["executed_static"] = None
        return out


def _line(row: dict) -> ProfileLine:
    """A line's row, frozen (the ``class`` key is ``op_class``)."""
    fields_ = {("op_class" if k == "class" else k): v for k, v in row.items()}
    if "excess" in fields_:
        x = fields_["excess"]
        fields_["excess"] = Excess(wavefronts=x["wavefronts"], by=tuple(x["by"]))
    for k in ("entries", "predicted_range"):
        if k in fields_:
            fields_[k] = tuple(fields_[k])
    return ProfileLine(**fields_)


def _entry_class(e: LedgerEntry) -> str:
    if e.gmma_wavefronts is not None:
        return "gmma"
    c = op_class(e.family, e.instr, e.cache)
    return "ldgsts" if c.startswith("ldgsts") else c


def explain(ledger: LedgerReport, rows: list[SassRow], ctas: int = 1) -> list[ProfileLine]:
    """Per measured source line and instruction class: executed and wavefronts measured, the
    entries that own it, and their wavefronts at the executions measured (the per-instruction cost
    of the entries times the instructions executed; ``ctas`` CTAs ran)."""
    lines: dict[tuple[str, int, str], list[SassRow]] = {}
    for r in rows:
        if r.sass.split()[:1] == ["@!PT"]:  # never issued (ptxas pads LDGSTS with @!PT LDS RZ, [RZ])
            continue
        lines.setdefault((r.file, r.line, sass_class(r.sass)), []).append(r)
    counted = [e for e in ledger.entries if e.family in ("lsu", "ldgsts") and e.counted]
    counted += [
        replace(e, wavefronts=e.gmma_wavefronts, ideal=e.gmma_wavefronts)
        for e in ledger.entries
        if e.gmma_wavefronts is not None
    ]  # op_gmma: ideal assumed
    out = []
    for (file, line, cls), rs in sorted(lines.items()):
        here = f"{file}:{line}"
        owners = [e for e in counted if here in e.sass_lines]  # SASS names the innermost
        owners = owners or [e for e in counted if here in e.chain]
        owners = [e for e in owners if _entry_class(e) == cls and e.instructions]
        executed = sum(r.executed for r in rs)
        measured = None if any(r.wavefronts < 0 for r in rs) else sum(r.wavefronts for r in rs)
        row = {"location": here, "class": cls, "executed": executed, "measured_wavefronts": measured,
               "measured_ideal": sum(r.ideal for r in rs)}  # fmt: skip
        unowned = f"no ledger entry owns {cls} instructions at this line"
        why = None if owners else NOT_MODELLED.get(cls, unowned)
        if measured is None:
            why = "the export has no shared wavefronts for this line (no L1 Wavefronts Shared column)"
        if why:
            row.update(modelled=False, reason=why)
            out.append(row)
            continue
        if any((e.source or "").startswith("rule") for e in owners):
            why = "counted by a rule measured per kernel (a tensor-map fill's SASS loads and stores)"
            row.update(modelled=False, reason=f"{why}, not placed per line")
            out.append(row)
            continue
        if any(e.ncu_reads is not None for e in owners):
            row.update(modelled=False, reason=GUARDED_CG_NOTE)
            out.append(row)
            continue
        per_instr = {e.wavefronts / e.instructions for e in owners if e.wavefronts is not None}
        row["entries"] = [f"{e.location} {e.op} {e.instr}" for e in owners]
        if len(per_instr) != 1:
            row.update(modelled=False, reason="its entries cost differently per instruction (not split)")
            out.append(row)
            continue
        cost = per_instr.pop()
        n_instr = sum(e.instructions for e in owners)
        ideal = sum(e.ideal or 0 for e in owners) / n_instr
        row.update(modelled=True, predicted_wavefronts=cost * executed, ideal=ideal * executed,
                   executions_measured=executed / n_instr)  # fmt: skip
        static = [e.total_instructions for e in owners]
        row["executed_static"] = None if None in static else sum(static) * ctas
        row["agrees"] = abs(row["predicted_wavefronts"] - measured) < 1e-6
        most = sum(e.wavefronts if e.wavefronts_max is None else e.wavefronts_max for e in owners) / n_instr
        reached = sum(e.instructions_reached or e.instructions for e in owners)
        least = cost * n_instr / reached  # warps a guard turns off may execute the line, issuing nothing
        if most > cost or least < cost:  # cp.async rows under a 128-byte line: the count is a range
            row["predicted_range"] = [least * executed, most * executed]
            row["agrees"] = least * executed - 1e-6 <= measured <= most * executed + 1e-6
        if measured > row["measured_ideal"]:
            row["excess"] = {"wavefronts": measured - row["measured_ideal"],
                             "by": [f"{e.op} {e.instr}" for e in owners]}  # fmt: skip
        out.append(row)
    return [_line(r) for r in _pool_gmma(out, counted, ctas, lines)]


def _pool_gmma(out: list[dict], counted: list[LedgerEntry], ctas: int, lines: dict) -> list[dict]:
    """SASS may place one wgmma's HGMMA instructions on several source lines (the operands' and
    the dot's): gmma lines that are unowned or off are compared as one row, against the kernel's
    wgmma total (static executions) less what the lines that agree account for."""
    odd = [r for r in out if r["class"] == "gmma" and not r.get("agrees")
           and r["measured_wavefronts"] is not None]  # fmt: skip
    gmma = [e for e in counted if e.gmma_wavefronts is not None]
    if not odd or any(e.executions is None or e.condition_key for e in gmma):
        return out
    total = sum(e.gmma_wavefronts * e.executions for e in gmma) * ctas
    rest = total - sum(r["predicted_wavefronts"] for r in out if r["class"] == "gmma" and r.get("agrees"))

    def rows_of(r: dict) -> dict:
        file, line = r["location"].rsplit(":", 1)
        return {(x.address or id(x)): x for x in lines[(file, int(line), "gmma")]}

    sass = {}  # each instruction once (an inlined one is listed under every line of its chain)
    for r in odd:
        sass.update(rows_of(r))
    for r in out:  # and not those a line that agrees already accounts for
        if r["class"] == "gmma" and r.get("agrees"):
            for key in rows_of(r):
                sass.pop(key, None)
    measured = sum(x.wavefronts for x in sass.values())
    row = {"location": ", ".join(r["location"] for r in odd), "class": "gmma",
           "executed": sum(x.executed for x in sass.values()), "measured_wavefronts": measured,
           "measured_ideal": sum(x.ideal for x in sass.values()), "modelled": True,
           "predicted_wavefronts": rest, "ideal": rest, "entries": ["the kernel's other wgmma reads"],
           "note": "SASS places these HGMMA instructions on other source lines than the ledger's: "
                   "compared pooled, against the wgmma total less the lines that agree",
           "agrees": rest == measured}  # fmt: skip
    return [r for r in out if r not in odd] + [row]


def to_text(result: list[ProfileLine], kernel: str) -> str:
    """One line per measured source line."""
    out = [f"{kernel}: {len(result)} source lines with shared-memory instructions"]
    for r in result:
        measured = "n/a" if r.measured_wavefronts is None else r.measured_wavefronts
        head = f"  {r.location:<22} {r.op_class:<6} {r.executed:>8} executed  {measured:>8} measured"
        if not r.modelled:
            out.append(f"{head}  (not modelled: {r.reason})")
            continue
        tag = ("within its range" if r.predicted_range is not None else "=") if r.agrees else "DIFFERS"
        out.append(f"{head}  {r.predicted_wavefronts:>8.0f} predicted {tag}  ideal {r.ideal:.0f}  "
                   f"[{'; '.join(r.entries or ())}]")  # fmt: skip
        if r.excess is not None:
            out.append(f"      excess {r.excess.wavefronts} over the ideal: {', '.join(r.excess.by)}")
    return "\n".join(out) + "\n"
