"""Our bases equal Triton 3.9.0's ``to_linear_layout`` on >= 300 random attributes per kind.

Triton parses the same attribute *text* (its own MLIR parser) in a subprocess, since it aborts
the process on some inputs. Needs the ``triton`` extra (installed by ``make test``)."""

from __future__ import annotations

import importlib.util

import pytest
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation.triton import parse_triton

from tests.oracle.driver import agreement, run_oracle, tally
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


@pytest.mark.compile
def test_bases_equal_triton(capsys):
    all_cases = cases(seed=20261122, per_kind=PER_KIND)
    counts, mismatches = agreement(all_cases, run_oracle(all_cases), ours)
    with capsys.disabled():
        tally("Triton 3.9.0 agreement, attributes", KINDS, counts, mismatches, PER_KIND, 16)
