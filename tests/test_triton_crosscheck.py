"""bankproof's counts against Triton's own ``ttgl.bank_conflicts`` for every (distributed, shared)
pair of the built-in corpus; docs/explanation/triton-crosscheck.md is what this produces."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lab import crosscheck

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "oracle" / "bank_conflicts.py"


def ask_triton(cases: list[dict]) -> dict[int, dict]:
    """Run the oracle; when Triton aborts the process on a case, record it and go on after it."""
    answers: dict[int, dict] = {}
    todo = list(cases)
    while todo:
        proc = subprocess.run(
            [sys.executable, str(ORACLE)], input=json.dumps(todo), capture_output=True, text=True, timeout=600
        )
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                answers[row["id"]] = row
        todo = [c for c in todo if c["id"] not in answers]
        if todo:  # the process died on todo[0]
            answers[todo[0]["id"]] = {"id": todo[0]["id"], "ok": False, "error": proc.stderr[-200:]}
            todo = todo[1:]
    return answers


@pytest.mark.compile
def test_counts_agree_with_triton(corpus_entries, capsys):
    import triton

    cases = crosscheck.cases(corpus_entries)
    answers = ask_triton(cases)
    rows = [crosscheck.compare(c, answers[c["id"]]) for c in cases]
    answered = [r for r in rows if r["agree"] is not None]
    assert len(answered) >= 80
    assert all(r["agree"] or r["explained_by"] for r in answered), [r for r in answered if not r["agree"]]
    unanswered = [r for r in rows if r["agree"] is None]
    assert all(r["triton_error"] == "not implemented for subslices" for r in unanswered)
    doc = crosscheck.markdown(rows, triton.__version__)
    assert (ROOT / "docs" / "explanation" / "triton-crosscheck.md").read_text() == doc
    with capsys.disabled():
        agree = sum(1 for r in answered if r["agree"])
        print(f"\ncross-check: {len(rows)} pairs, Triton answered {len(answered)}, {agree} equal")
