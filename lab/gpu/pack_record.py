"""Pack a whole-kernel GPU run into one record (device side): each plan kernel's counters
(``triton_kernels collect`` output, and a second ncu pass of the same launches for the run-to-run
spread), its Nsight Compute source page cut to what ``bankproof triton profile`` reads, and its
executed warp instructions per SASS opcode (from the full page: what ``op_misc`` is made of).

Usage: ``python -m lab.gpu.pack_record PLAN COUNTERS.json REPEAT.json PROFILE.json OUT.json``.

>>> opcode("@!P0 SHFL.BFLY PT, R3, R2, 0x1f")
'SHFL'
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path


def opcode(sass: str) -> str:
    m = re.match(r"\s*(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)", sass)
    return m.group(1) if m else ""


def opcodes(page: str) -> dict[str, int]:
    """Executed warp instructions per opcode over a source page's SASS rows."""
    out: Counter[str] = Counter()
    col = None
    for r in csv.reader(line for line in page.splitlines() if line.startswith('"')):
        if r and r[0] == "Line No":
            col = r.index("Instructions Executed") if "Instructions Executed" in r else None
        elif col is not None and len(r) > col and r[0] == "" and r[2].startswith("0x"):
            n = r[col].replace(",", "")
            if n.isdigit() and int(n):
                out[opcode(r[3])] += int(n)
    return dict(sorted(out.items()))


def pack(plan_path: str, counters: str, repeat: str, profile: str, out_path: str) -> None:
    from bankproof.gpu_checks.source_page import reduce_export

    plan = {k["name"]: k for k in json.loads(Path(plan_path).read_text())["kernels"]}
    first = {r["name"]: r for r in json.loads(Path(counters).read_text())["runs"]}
    second = (
        {r["name"]: r for r in json.loads(Path(repeat).read_text())["runs"]} if Path(repeat).exists() else {}
    )
    pages = {e["name"]: e["csv"] for e in json.loads(Path(profile).read_text())["exports"]}
    runs = []
    for name, kp in plan.items():
        if name not in first:
            continue
        run = {"name": name, "file": kp.get("file"), "kernel": kp["kernel"], "args": kp["args"],
               "threads": kp["threads"], "shared": kp["shared"], "measured": first[name]["measured"]}  # fmt: skip
        if name in second:
            run["measured_repeat"] = second[name]["measured"]
        if name in pages:
            run["source_page"] = reduce_export(pages[name])
            run["opcodes"] = opcodes(pages[name])
        runs.append(run)
    Path(out_path).write_text(json.dumps({"runs": runs}, indent=1) + "\n")
    print(f"{len(runs)} kernels packed -> {out_path}")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit("usage: python -m lab.gpu.pack_record PLAN COUNTERS.json REPEAT.json PROFILE.json OUT.json")
    pack(*sys.argv[1:6])
