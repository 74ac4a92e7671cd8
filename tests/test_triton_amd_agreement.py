"""AMD attributes (``amd_mfma``, ``amd_wmma``, their ``dot_op`` operands, 64-lane ``blocked``):
our bases equal Triton 3.9.0's ``to_linear_layout`` on >= 300 random attributes of each kind
(count printed). Triton parses the same text in a subprocess (tests/oracle)."""

from __future__ import annotations

import importlib.util

import pytest
from bankproof.models.errors import InputError
from bankproof.models.notation.triton import parse_triton

from tests.oracle.driver import agreement, run_oracle, tally
from tests.oracle.generate_amd import KINDS, cases

PER_KIND = 300

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")


def ours(case: dict) -> dict:
    try:
        d = parse_triton(case["text"]).to_layout(case["shape"]).as_dict()
    except InputError as e:
        return {"refused": str(e)}
    return {k: d.get(k, []) for k in ("register", "lane", "warp", "block")}


@pytest.mark.compile
def test_amd_bases_equal_triton(capsys):
    all_cases = cases(seed=20261123, per_kind=PER_KIND)
    counts, mismatches = agreement(all_cases, run_oracle(all_cases), ours)
    with capsys.disabled():
        tally("AMD attributes vs Triton 3.9.0 to_linear_layout", KINDS, counts, mismatches, PER_KIND, 18)
