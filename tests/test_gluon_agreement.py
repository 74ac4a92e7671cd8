"""Gluon layout objects read by bankproof equal Triton 3.9.0's ``to_linear_layout`` of the same
objects, on >= 300 random objects of each of the eleven Gluon classes (nine NVIDIA, two AMD) (count printed).

The objects are built twice from one recipe: here (handed to bankproof's API as objects) and in
a Triton subprocess (tests/oracle), which can abort on some inputs. A ``PaddedSharedLayout`` has
no linear layout in Triton; its answer is the object Triton reads back from the attribute text
bankproof wrote for it, which must equal the object itself. Needs the ``triton`` extra."""

from __future__ import annotations

import importlib.util

import pytest
from bankproof.models.errors import InputError
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import parse_layout
from bankproof.models.notation.gluon import gluon_attribute

from tests.oracle.driver import agreement, run_oracle, tally
from tests.oracle.gluon_generate import KINDS, build, cases

PER_KIND = 300

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")


def ours(obj: object, case: dict) -> dict:
    lay = parse_layout(obj, case["shape"]).layout
    if isinstance(lay, PaddedLayout):
        return {
            "intervals": [list(p) for p in lay.intervals],
            "offset": [list(b) for b in lay.linear.in_bases("offset")],
            "block": [list(b) for b in lay.linear.in_bases("block")],
        }
    d = lay.as_dict()
    dims = ("offset", "block") if case["memory"] else ("register", "lane", "warp", "block")
    return {k: d.get(k, []) for k in dims}


@pytest.mark.compile
def test_gluon_objects_equal_triton(capsys):
    import triton.experimental.gluon.language as ttgl

    all_cases = cases(seed=20261123, per_kind=PER_KIND)
    objects = {c["id"]: build(c["recipe"], {**vars(ttgl), **vars(ttgl.amd)}) for c in all_cases}
    for c in all_cases:
        c["text"] = gluon_attribute(objects[c["id"]]).text()
        c["elem"] = "i16"

    def mine(c: dict) -> dict:
        try:
            return ours(objects[c["id"]], c)
        except InputError as e:
            return {"refused": str(e)}

    counts, mismatches = agreement(all_cases, run_oracle(all_cases), mine)
    with capsys.disabled():
        tally("Gluon objects vs Triton 3.9.0 to_linear_layout", KINDS, counts, mismatches, PER_KIND, 24)
