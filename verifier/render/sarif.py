"""SARIF 2.1.0 of a scan or a corpus run, built so code scanning can map it: the driver names its
version, information and help pages, and every rule its help; locations under ``root`` (a
repository's checkout) are relative URIs against ``%SRCROOT%`` (``originalUriBaseIds`` says where
that was); a buffer above its optimum is one result at its first access, with the buffer's other
accesses as related locations.

>>> artifact("/repo/kernels/mm.py", "/repo")
{'uri': 'kernels/mm.py', 'uriBaseId': '%SRCROOT%'}
>>> artifact("/elsewhere/mm.py", "/repo"), artifact("mm.py", None)
({'uri': 'file:///elsewhere/mm.py'}, {'uri': 'mm.py'})
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from bankproof.models.version import DOCS, HOME, VERSION
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.results import CorpusResult, ScanResult
from bankproof.verifier.triton.scan_records import Location

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION = HOME
HELP = f"{DOCS}/howto/triton.md"
KERNEL_HELP = f"{DOCS}/howto/kernel.md"
BASE = "%SRCROOT%"
RULES = {
    "BP001": ("shared-memory access costs more wavefronts than the optimal layout allows",
              "The buffer's accesses cost more shared-memory wavefronts than the cheapest layout for the "
              "same writers and readers; the message names the better layout where one was found."),
    "BP002": ("shared-memory access could not be analysed, or its buffer's optimum is unknown",
              "bankproof could not count this access (or the buffer's optimum): the gate exits 3 "
              "unless --allow-unknown; the message says why."),
    "BP003": ("a PTX shared-memory instruction no TTGIR op owns, or counted differently from the PTX",
              "The compiled PTX has a shared-memory instruction the scan did not count, or counts it "
              "with other instructions than the scan: the counts need a look (exit 4)."),
}  # fmt: skip


def driver(rules: dict[str, tuple[str, str]], help_uri: str = HELP) -> dict:
    """The tool's driver: name, version, where to read about it, and each rule with its help."""
    return {
        "name": "bankproof",
        "version": VERSION,
        "informationUri": INFORMATION,
        "rules": [{"id": k, "shortDescription": {"text": short}, "fullDescription": {"text": full},
                   "help": {"text": full}, "helpUri": help_uri} for k, (short, full) in rules.items()],
    }  # fmt: skip


def artifact(path: str, root: str | None) -> dict:
    """A SARIF artifact location: relative to ``%SRCROOT%`` where ``path`` lies under ``root``
    (or is relative already), a ``file://`` URI where it is absolute elsewhere, else as given."""
    if root is None:
        return {"uri": path}
    p, r = PurePosixPath(path), PurePosixPath(root)
    if not p.is_absolute():
        return {"uri": p.as_posix(), "uriBaseId": BASE}
    if p.is_relative_to(r):
        return {"uri": p.relative_to(r).as_posix(), "uriBaseId": BASE}
    return {"uri": p.as_uri()}


def _location(loc: Location, root: str | None, message: str | None = None) -> dict:
    if loc.source is not None:
        where, region = (
            loc.source,
            {"startLine": max(1, loc.line or 0), "startColumn": max(1, loc.column or 0)},
        )
    else:
        where, region = loc.ttgir, {"startLine": loc.ttgir_line}
    out = {"physicalLocation": {"artifactLocation": artifact(where, root), "region": region}}
    return {**out, "message": {"text": message}} if message else out


def _source(where: str, root: str | None) -> dict:
    """``file:line:col`` (a ledger location) as a SARIF location."""
    parts = where.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        region = {"startLine": max(1, int(parts[1])), "startColumn": max(1, int(parts[2]))}
        return {"physicalLocation": {"artifactLocation": artifact(parts[0], root), "region": region}}
    return {"physicalLocation": {"artifactLocation": artifact(where, root)}}


def _result(rule: str, level: str, text: str, locations: list, related: list | None = None) -> dict:
    out = {"ruleId": rule, "level": level, "message": {"text": text}, "locations": locations}
    if related:
        out["relatedLocations"] = [{"id": i, **loc} for i, loc in enumerate(related, 1)]
    return out


def to_sarif(result: ScanResult, root: str | None = None) -> dict:
    """SARIF 2.1.0 of a scan: BP001 per buffer above its optimum (at its first access, the others
    related), BP002 per access not analysed or buffer whose optimum is unknown, the ledger's."""
    results = []
    for rep in result.reports:
        for b in rep.buffers:
            for a in b.accesses:
                if a.error is not None:
                    results.append(
                        _result("BP002", "warning", f"not analysed: {a.error}", [_location(a.location, root)])
                    )
            counted = [a for a in b.accesses if a.error is None]
            if not counted:
                continue
            if b.gap is None:
                text = f"buffer {b.shown} ({b.shared}): optimum unknown ({b.reason or ''})"
                results.append(_result("BP002", "warning", text, [_location(counted[0].location, root)]))
            elif b.gap:
                each = "; ".join(f"{a.kind} {a.wavefronts} (ideal {a.ideal})" for a in counted)
                better = f"; better layout {b.better_layout}" if b.better_layout else ""
                text = f"buffer {b.shown} ({b.shared}) costs {b.wavefronts} wavefronts, optimum "
                text += f"{b.optimal_wavefronts}: {each}{better}"
                related = [
                    _location(a.location, root, f"{a.kind} of {b.shown}: {a.wavefronts} wavefronts")
                    for a in counted[1:]
                ]
                results.append(
                    _result("BP001", "warning", text, [_location(counted[0].location, root)], related)
                )
        for c in rep.conversions:
            if c.error is not None:
                text = f"convert_layout not analysed: {c.error}"
                results.append(_result("BP002", "warning", text, [_location(c.location, root)]))
        results += _ledger(rep.ledger, root)
    run: dict = {"tool": {"driver": driver(RULES)}, "results": results}
    if root is not None:
        run["originalUriBaseIds"] = {BASE: {"uri": PurePosixPath(root).as_uri().rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _ledger(led: LedgerReport | None, root: str | None) -> list[dict]:
    """BP002 per ledger entry whose wavefronts are unknown, BP003 per PTX instruction no op owns
    or counted differently by the scan and the PTX."""
    if not led:
        return []
    out = []
    for e in led.entries:
        if e.family in ("lsu", "ldgsts") and e.wavefronts is None:
            text = f"{e.op} {e.instr}: wavefronts unknown ({e.reason or ''})"
            out.append(_result("BP002", "warning", text, [_source(e.location, root)]))
    for d in led.disagreements + led.unattributed:
        out.append(_result("BP003", "error", d, [_source(d.split(": ", 1)[0], root)]))
    return out


def corpus_sarif(result: CorpusResult, root: str | None = None) -> dict:
    """SARIF 2.1.0 of a corpus run: the scan's findings and the ledger's, for every compiled kernel."""
    reports = tuple(replace(e.report, ledger=e.ledger) for e in result.entries if e.report is not None)
    return to_sarif(ScanResult(1, reports), root)
