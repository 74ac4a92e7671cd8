"""Our bases equal Triton 3.9.0's ``to_linear_layout`` on >= 300 random attributes per kind.

Triton parses the same attribute *text* (its own MLIR parser) in a subprocess, since it aborts
the process on some inputs. Needs the ``triton`` extra (installed by ``make test``)."""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation.triton import parse_triton

from tests.oracle.driver import run_oracle, tally
from tests.oracle.generate import cases

PER_KIND = 300
KINDS = [
    "blocked",
    "linear",
    "nvidia_mma",
    "dot_op",
    "slice",
    "swizzled_shared",
    "nvmma_shared",
    "shared_linear",
    "padded_shared",
]
# Triton's Python wrapper refuses a shared layout with no offset bits (a one-element CTA slice);
# ours then has no offset bits either, which is the same answer.
EMPTY_OFFSETS = "offset_bases must not be empty"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")


def ours(case: dict) -> dict:
    lay = parse_triton(case["text"]).to_layout(case["shape"])
    if isinstance(lay, PaddedLayout):
        return {
            "intervals": [list(p) for p in lay.intervals],
            "offset": [list(b) for b in lay.linear.in_bases("offset")],
            "block": [],
        }
    d = lay.as_dict()
    dims = ("offset", "block") if case["memory"] else ("register", "lane", "warp", "block")
    return {k: d.get(k, []) for k in dims}


def test_bases_equal_triton(capsys):
    all_cases = cases(seed=20261122, per_kind=PER_KIND)
    answers = run_oracle(all_cases)
    counts: Counter = Counter()
    mismatches = []
    for c in all_cases:
        t = answers[c["id"]]
        mine = ours(c)
        if t["ok"]:
            same = mine == t["bases"]
        else:
            same = EMPTY_OFFSETS in t.get("error", "") and not mine.get("offset")
        counts[(c["kind"], same)] += 1
        if not same:
            mismatches.append((c["kind"], c["text"], c["shape"], t, mine))
    with capsys.disabled():
        tally("Triton 3.9.0 agreement, attributes", KINDS, counts, mismatches, PER_KIND, 16)
