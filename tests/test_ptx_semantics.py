"""The GPU is the oracle for PTX semantics (issue 55, item 2): every integer, bit, conversion,
predicate, shuffle and vote form the machines evaluate, at every type and modifier, ran on an H100
on edge and random operands (lab/gpu/ptx_semantics.py; gpu_checks/results/h100-2026-12-07-ptx-
semantics.json.gz). Replayed here through both machines (the kernel command's and the Triton
ledger's): every case equal or left unknown, never a different value; the forms the machines may
evaluate are exactly those measured so."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from bankproof.verifier.ptx import forms

from lab.gpu.ptx_semantics import TEMPLATES, WARP_TEMPLATES, measured_forms, replay_case

RECORD = (
    Path(__file__).resolve().parent.parent
    / "gpu_checks"
    / "results"
    / "h100-2026-12-07-ptx-semantics.json.gz"
)


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads(gzip.decompress(RECORD.read_bytes()))


@pytest.mark.slow
@pytest.mark.gpu_replay
def test_every_recorded_case_is_equal_or_refused(record):
    got = Counter(replay_case(c) for c in record["cases"] if "error" not in c)
    assert got["mismatch"] == 0 and got["equal"] >= 18_000
    assert sum(got.values()) >= 20_000 and record["device"].startswith("NVIDIA H100")


@pytest.mark.slow
@pytest.mark.gpu_replay
def test_the_five_forms_the_isa_reading_got_wrong_are_measured_equal(record):
    """bfe.s32 past the width, bfind.s32 of negative values, bfind.shiftamt, div.s64 past 2^53 and a
    signed byte converted into a 16-bit register: each case equal (or, for the byte, refused)."""
    seen: dict[str, Counter] = {}
    for c in record["cases"]:
        if c["op"] in ("bfe.s32", "bfind.s32", "bfind.shiftamt.u32", "div.s64", "cvt.s16.s8"):
            seen.setdefault(c["op"], Counter())[replay_case(c)] += 1
    assert all(v["mismatch"] == 0 for v in seen.values()) and len(seen) == 5
    assert all(seen[op]["equal"] == 64 for op in ("bfe.s32", "bfind.s32", "bfind.shiftamt.u32", "div.s64"))


@pytest.mark.slow
@pytest.mark.gpu_replay
def test_the_machines_evaluate_exactly_the_measured_forms(record):
    assert forms.forms() == frozenset(measured_forms(record))
    assert {c["op"].partition(" LUT")[0] for c in record["cases"]} == {
        op.partition(" LUT")[0] for op, _ in TEMPLATES + WARP_TEMPLATES
    }  # every probe ran


def test_an_unmeasured_form_is_left_unknown():
    """add.cc (a carry) was never measured: both machines leave its result unknown."""
    import numpy as np
    from bankproof.verifier.kernel.values import Value, arith
    from bankproof.verifier.ptx.alu import compute

    assert arith("add.cc.u32", [Value.const(1, 1), Value.const(2, 1)]) is None
    assert compute("add.cc.u32", [np.array([1]), np.array([2])], []) is None
    assert compute("add.u32", [np.array([1]), np.array([2])], []).tolist() == [3]
