"""The scan's instruction choice for ``local_alloc`` stores and ``local_load`` loads of any register
layout, against Triton 3.9.0's own PTX: 400 random cases (blocked layouts of rank 1 and 2, 8- to
64-bit elements, swizzled and NVMMA shared encodings, sm80 and sm90) compiled by Triton here
(``lab/ldst_matrix_oracle.py`` -> ``tests/data/triton_ldst_matrix.json``). Triton tries
``ldmatrix``/``stmatrix`` first on every layout; the scan chooses them exactly where Triton does."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from bankproof.verifier.triton.scan import scan_text

from lab.ldst_matrix_oracle import module

TABLE = json.loads((Path(__file__).parent / "data" / "triton_ldst_matrix.json").read_text())


def _scan_counts(case: dict) -> dict[str, int]:
    got: collections.Counter = collections.Counter()
    for b in scan_text(module(case)).buffers:
        for a in b.accesses:
            assert a.instr is not None, (case, a.error)
            got[a.instr] += a.instructions // case["warps"]
    return dict(got)


def _width(instr: str) -> int:
    return int(instr.lstrip("ldst"))


@pytest.mark.compile
def test_matrix_instructions_are_chosen_where_triton_chooses_them(capsys):
    assert TABLE["triton"] == "3.9.0" and len(TABLE["cases"]) == 400
    matrix = equal = 0
    for case in TABLE["cases"]:
        got, want = _scan_counts(case), case["ptx_counts"]
        mine = {k: v for k, v in got.items() if k.startswith(("ldsm", "stsm"))}
        theirs = {k: v for k, v in want.items() if k.startswith(("ldsm", "stsm"))}
        assert mine == theirs, case
        matrix += bool(theirs)
        if got == want:
            equal += 1
            continue
        # the one gap left: Triton vectorizes a chunk whose elements fill an aligned block in a
        # register order fixed at compile time; the model's vectors keep register order
        for k in set(got) | set(want):
            if k.startswith(("ld", "st")) and not k.startswith(("ldsm", "stsm")) and k not in want:
                wider = [w for w in want if w[:2] == k[:2] and _width(w) > _width(k)]
                assert wider, (case, got, want)
    with capsys.disabled():
        print(
            f"\nldmatrix/stmatrix: {matrix} of 400 Triton cases, each chosen alike; {equal} of 400 equal in full"
        )
    assert (matrix, equal) == (83, 373)
