"""Run the Triton oracle in subprocesses; batches that crash are bisected, so one bad input
costs one answer, not a run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ORACLE = Path(__file__).with_name("triton_oracle.py")


def _call(items: list[dict], timeout: float) -> list[dict] | None:
    try:
        proc = subprocess.run(
            [sys.executable, str(ORACLE)],
            input=json.dumps(items),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(results) != len(items):
        return None
    return results


def run_oracle(items: list[dict], timeout: float = 300.0) -> dict[int, dict]:
    """Triton's answer for each item id: ``{"ok": True, "bases": ...}`` or an error/crash."""
    out: dict[int, dict] = {}
    stack = [items]
    while stack:
        batch = stack.pop()
        res = _call(batch, timeout)
        if res is None:
            if len(batch) == 1:
                out[batch[0]["id"]] = {"ok": False, "error": "crash (the oracle process died)"}
            else:
                mid = len(batch) // 2
                stack += [batch[:mid], batch[mid:]]
            continue
        for r in res:
            out[r["id"]] = r
    return out


EMPTY_OFFSETS = "offset_bases must not be empty"


def same_bases(triton: dict, mine: dict) -> bool:
    """Our answer equals Triton's: the same bases (and, for an object Triton read back, the same
    object); or both have no offset bits, which Triton's Python wrapper reports as an error (it
    refuses a shared layout of a one-element CTA slice)."""
    if triton["ok"]:
        return mine == triton["bases"] and triton.get("same_object", True)
    return EMPTY_OFFSETS in triton.get("error", "") and mine.get("offset") == []


def agreement(cases: list[dict], answers: dict[int, dict], ours) -> tuple[Counter, list]:
    """``counts[(kind, same)]`` and the mismatches of ``ours(case)`` against Triton's answers."""
    counts: Counter = Counter()
    mismatches = []
    for c in cases:
        t, mine = answers[c["id"]], ours(c)
        same = same_bases(t, mine)
        counts[(c["kind"], same)] += 1
        if not same:
            mismatches.append((c["kind"], c.get("text") or c.get("recipe"), c["shape"], t, mine))
    return counts, mismatches


def tally(title: str, kinds, counts, mismatches: list, per_kind: int, width: int = 16) -> None:
    """Print ``kind compared / mismatches`` per kind (``counts[(kind, same)]``), then assert at
    least ``per_kind`` of each kind were compared and none mismatched."""
    print(f"\n{title} (compared / mismatches):")
    for k in kinds:
        print(f"  {k:{width}} {counts[(k, True)] + counts[(k, False)]:4d} / {counts[(k, False)]}")
    print(f"  {'total':{width}} {sum(counts.values()):4d} / {len(mismatches)}")
    for k in kinds:
        assert counts[(k, True)] + counts[(k, False)] >= per_kind, k
    assert not mismatches, mismatches[:3]
