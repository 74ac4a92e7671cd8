"""``bankproof triton scan FILE.ttgir ...``: every shared buffer a Triton kernel allocates, each
access's exact wavefronts, the optimum for the buffer, and a better layout when there is one; as
text, JSON, or SARIF 2.1.0 (results at the Python source line from ``loc(...)`` when present).

Exit codes: 0 every buffer at its optimum, 1 some buffer costs more than its optimum, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bankproof.models.errors import InputError
from bankproof.verifier.triton.scan import scan_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES = {
    "BP001": "shared-memory access costs more wavefronts than the optimal layout allows",
    "BP002": "shared-memory access could not be analysed",
}


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("triton scan", "FILE", f"cannot be read ({e.__class__.__name__})", path) from None


def scan_files(paths: list[str]) -> list[dict]:
    return [scan_text(_read(p), p) for p in paths]


def _where(loc: dict) -> str:
    src = f"{loc['source']}:{loc['line']}" if "source" in loc else ""
    return f"{loc['ttgir']}:{loc['ttgir_line']}" + (f" ({src})" if src else "")


def to_text(reports: list[dict]) -> str:
    lines = []
    for rep in reports:
        lines.append(f"{rep['file']}: target {rep['target']}, {rep['num_warps']} warps")
        for b in rep["buffers"]:
            opt = b["optimal_wavefronts"]
            gap = b["gap"]
            verdict = "optimal" if gap == 0 else f"gap {gap}" if gap is not None else "optimum unknown"
            lines.append(
                f"  buffer {b['buffer']} {'x'.join(map(str, b['shape']))} {b['dtype']} {b['shared']}: "
                f"{b['wavefronts']} wavefronts, optimum {opt if opt is not None else '?'} ({verdict})"
            )
            for a in b["accesses"]:
                cost = (
                    f"{a['wavefronts']} wavefronts (ideal {a['ideal']}) "
                    f"with {a['instructions']} x {a['instr']}"
                    if "wavefronts" in a
                    else f"not analysed: {a['error']}"
                )
                mark = " [assumed: 16-byte cp.async]" if a.get("hardware") == "assumed" else ""
                lines.append(f"    {a['kind']:5} {a['op']:<34} {cost}  at {_where(a['location'])}{mark}")
            if b.get("better_layout"):
                lines.append(f"    better: {b['better_layout']}")
            elif b["gap"] is None and b.get("reason"):
                lines.append(f"    ({b['reason']})")
        for c in rep["conversions"]:
            if "shared_plan" in c:
                p = c["shared_plan"]
                lines.append(
                    f"  convert_layout at {_where(c['location'])}: through shared memory at best "
                    f"{p['store']['wavefronts']} + {p['load']['wavefronts']} wavefronts with {p['layout']}"
                )
            else:
                lines.append(f"  convert_layout at {_where(c['location'])}: {c.get('error')}")
    return "\n".join(lines) + "\n"


def _sarif_location(loc: dict) -> dict:
    if "source" in loc:
        uri, region = loc["source"], {"startLine": max(1, loc["line"]), "startColumn": max(1, loc["column"])}
    else:
        uri, region = loc["ttgir"], {"startLine": loc["ttgir_line"]}
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}


def to_sarif(reports: list[dict]) -> dict:
    """SARIF 2.1.0: one result per access of a buffer above its optimum (BP001) or not analysed."""
    results = []
    for rep in reports:
        for b in rep["buffers"]:
            for a in b["accesses"]:
                if "error" in a:
                    rule, level, text = "BP002", "warning", f"not analysed: {a['error']}"
                elif b["gap"]:
                    rule, level = "BP001", "warning"
                    text = (
                        f"{a['kind']} of buffer {b['buffer']} ({b['shared']}): {a['wavefronts']} wavefronts "
                        f"(ideal {a['ideal']}); the buffer costs {b['wavefronts']}, optimum "
                        f"{b['optimal_wavefronts']}"
                        + (f"; better layout {b['better_layout']}" if b.get("better_layout") else "")
                    )
                else:
                    continue
                results.append(
                    {
                        "ruleId": rule,
                        "level": level,
                        "message": {"text": text},
                        "locations": [_sarif_location(a["location"])],
                    }
                )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "bankproof",
                        "rules": [{"id": k, "shortDescription": {"text": v}} for k, v in RULES.items()],
                    }
                },
                "results": results,
            }
        ],
    }


def run_scan(args: argparse.Namespace) -> int:
    reports = scan_files(args.files)
    if args.sarif:
        sys.stdout.write(json.dumps(to_sarif(reports), indent=1) + "\n")
    elif args.json:
        sys.stdout.write(json.dumps({"schema": 1, "reports": reports}, indent=1) + "\n")
    else:
        sys.stdout.write(to_text(reports))
    worse = any(b["gap"] for rep in reports for b in rep["buffers"])
    return 1 if worse else 0


def run_corpus_cmd(args: argparse.Namespace) -> int:
    from bankproof.verifier.triton import corpus

    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    for a in archs:
        if a not in corpus.ARCHS:
            raise InputError("triton corpus", "--arch", f"must be among {', '.join(corpus.ARCHS)}", a)
    if args.kernels:
        mod = corpus._load_file(args.kernels)
        configs = getattr(mod, "CONFIGS", None)
        if not isinstance(configs, list) or not configs:
            raise InputError(
                "triton corpus", "--kernels", "must define CONFIGS, a non-empty list", args.kernels
            )
    else:
        configs = corpus.builtin_configs()
    baseline = corpus.load_baseline(args.baseline) if args.baseline and not args.update_baseline else None
    entries = corpus.run_corpus(configs, archs, args.kernels, args.workers)
    worse = corpus.compare(entries, baseline) if baseline is not None else []
    gaps = [
        f"{corpus.access_key(e, b, i, a)}: buffer {b['wavefronts']}, optimum {b['optimal_wavefronts']}"
        for e in entries
        for b in e.get("report", {}).get("buffers", [])
        for i, a in enumerate(b["accesses"])
        if b["gap"]
    ]
    if args.json:
        sys.stdout.write(
            json.dumps({"schema": 1, "entries": entries, "worse": worse, "gaps": gaps}, indent=1) + "\n"
        )
    else:
        sys.stdout.write(_corpus_text(entries, archs))
    if args.update_baseline:
        if not args.baseline:
            raise InputError("triton corpus", "--update-baseline", "needs --baseline FILE")
        flat = corpus.flat_accesses(entries)
        Path(args.baseline).write_text(
            json.dumps({"schema": 1, "accesses": flat}, indent=1, sort_keys=True) + "\n"
        )
        sys.stderr.write(f"baseline: {len(flat)} accesses -> {args.baseline}\n")
    for w in worse:
        sys.stderr.write(f"worse than baseline: {w}\n")
    if args.require_optimal:
        for g in gaps:
            sys.stderr.write(f"not optimal: {g}\n")
    lowering = [f"{e['config']}@{e['arch']} {p}" for e in entries for p in e.get("lowering", [])]
    for d in lowering:  # the scan's instructions are not Triton's: its counts may be wrong
        sys.stderr.write(f"instructions differ from Triton's PTX: {d}\n")
    if lowering:
        return 4
    return 1 if worse or (args.require_optimal and gaps) else 0


def _corpus_text(entries: list[dict], archs: list[str]) -> str:
    lines = []
    for arch in archs:
        mine = [e for e in entries if e["arch"] == arch]
        ok = [e for e in mine if "report" in e]
        lines.append(f"{arch}: {len(mine)} configurations, {len(ok)} compiled")
        for e in mine:
            if "error" in e:
                lines.append(f"  {e['config']}: not compiled ({e['error']})")
                continue
            rep = e["report"]
            lines.append(
                f"  {e['config']}: {len(rep['buffers'])} buffers, {len(rep['conversions'])} conversions"
            )
            for b in rep["buffers"]:
                gap = b["gap"]
                verdict = "optimal" if gap == 0 else f"gap {gap}" if gap is not None else "optimum unknown"
                costs = ", ".join(
                    f"{a['kind']} {a['wavefronts']}/{a['ideal']} {a['instr']}" if "wavefronts" in a else "n/a"
                    for a in b["accesses"]
                )
                lines.append(f"    {b['buffer']} {b['shared']}: {b['wavefronts']} ({verdict}) [{costs}]")
    return "\n".join(lines) + "\n"
