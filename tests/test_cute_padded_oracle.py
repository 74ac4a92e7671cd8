"""bankproof's reading of padded CuTe layouts against CuTe's own: random layouts whose strides skip
elements (nested modes, either major order, some swizzled, some overlapping) built by the CuTe DSL,
whose offsets at every index are committed in ``tests/data/cute_padded_dsl.json`` (by
``lab/cute_padded_oracle.py``). Every layout bankproof reads must put every element where the DSL
does; every layout it refuses must be one that no linear layout with padding gives, which is checked
here another way: padding after power-of-two intervals makes the jump in offsets before the x-th
element depend only on how many times 2 divides x, never shrinking as that grows."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from bankproof.models.access import element_offsets
from bankproof.models.errors import InputError
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import parse_layout

TABLE = Path(__file__).resolve().parent / "data" / "cute_padded_dsl.json"


def _padded_linear(offsets: np.ndarray) -> bool:
    """Whether some linear layout with power-of-two padding intervals gives ``offsets`` (by index)."""
    n = len(offsets)
    order = np.argsort(offsets, kind="stable")
    phys = offsets[order]
    if phys[0] != 0 or np.any(np.diff(phys) == 0):
        return False
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    idx = np.arange(n)
    images = [int(rank[1 << b]) for b in range(n.bit_length() - 1)]
    xor = np.zeros(n, dtype=np.int64)
    for b, image in enumerate(images):
        xor ^= ((idx >> b) & 1) * image
    if not np.array_equal(xor, rank):
        return False
    gaps = np.diff(phys) - 1  # gaps[x - 1]: the padding just before the x-th element
    by_twos: dict[int, int] = {}
    for x in range(1, n):
        twos = (x & -x).bit_length() - 1
        if by_twos.setdefault(twos, int(gaps[x - 1])) != gaps[x - 1]:
            return False
    values = [by_twos[k] for k in sorted(by_twos)]
    return values == sorted(values)


def test_every_padded_layout_is_read_where_the_dsl_puts_it_or_refused_rightly():
    table = json.loads(TABLE.read_text())
    read = padded = refused = 0
    for case in table["cases"]:
        want = np.array(case["offsets"], dtype=np.int64)
        try:
            layout = parse_layout(case["layout"]).layout
        except InputError as e:
            assert not _padded_linear(want), case["layout"]
            assert e.field == "layout" and e.where.startswith("cute"), case["layout"]
            refused += 1
            continue
        assert _padded_linear(want), case["layout"]
        got = element_offsets(layout).reshape(-1, order="F")
        assert got.tolist() == want.tolist(), case["layout"]
        read += 1
        padded += isinstance(layout, PaddedLayout)
    assert (read, padded, refused) == (118, 100, 42)


@pytest.mark.parametrize(
    "text, intervals",
    [("(32,128):(132,1)", ((128, 4),)), ("(128,32):(1,132)", ((128, 4),)), ("(64,64):(1,72)", ((64, 8),)),
     ("((8,4),64):((64,520),1)", ((512, 8),)), ("(8,8):(64,1)", ((8, 56),))],
)  # fmt: skip
def test_padded_strides_are_triton_style_padding(text, intervals):
    """A stride of 132 on 128-element rows is Triton's ``padded_shared<[128:+4]>``: the same map."""
    assert parse_layout(text).layout.intervals == intervals


def test_a_padded_cute_spec_is_counted_by_every_engine_that_can(capsys):
    """(8,8):(1,9) f32, row reads: lanes 0 and 15 are (0,0) at byte 0 and (1,7) at byte 4*(1+63)."""
    from bankproof.verifier.api import verify

    spec = {
        "shape": [8, 8], "dtype": "f32", "dims": ["r", "c"], "memory": {"cute": "(8,8):(1,9)"},
        "access": [{"name": "row_read", "kind": "load", "instr": "ld32",
                    "layout": {"bases": {"register": [[4, 0]],
                                         "lane": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}}}],
    }  # fmt: skip
    (acc,) = verify(spec=spec).accesses
    assert (acc.wavefronts, acc.ideal) == (4, 2)
    assert acc.conflict.byte_addresses == (0, 256)
    assert acc.engines["algebra"].verdict == "n/a" and acc.engines["z3"].verdict == "refuted"


@pytest.mark.parametrize(
    "text, why",
    [("(4,4):(3,1)", "coordinates (0, 3) and (1, 0) share offset 3"),
     ("(4,4):(5,2)", "neither a bijection onto [0, 16) nor a linear layout with padding"),
     ("(4,4):(-4,1)", "must be >= 0"),
     ("(1024,1024):(1099511627776,1)", "more than 2^32 (no shared memory is so large)")],
)  # fmt: skip
def test_offsets_no_padding_gives_are_refused_naming_why(text, why):
    with pytest.raises(InputError, match=re.escape(why)):
        parse_layout(text)


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
def test_padded_layouts_print_back_as_triton_and_cute_reads_them():
    """Each DSL layout bankproof reads as padded is printed as ``padded_shared`` with offset bases;
    Triton 3.9.0 parses that text to the same bases and intervals, and the printed CuTe strides
    read back to the same offsets."""
    from bankproof.models.notation.padded import padded_notations

    from tests.oracle.driver import run_oracle

    items, want = [], {}
    for case in json.loads(TABLE.read_text())["cases"]:
        try:
            layout = parse_layout(case["layout"]).layout
        except InputError:
            continue
        if not isinstance(layout, PaddedLayout):
            continue
        printed = padded_notations(layout)
        if "cute" in printed:
            assert (
                element_offsets(parse_layout(printed["cute"]).layout).tolist()
                == element_offsets(layout).tolist()
            )
        if "triton" not in printed:
            continue
        shape = [s for _, s in layout.linear.out_dims]
        items.append({"id": len(items), "kind": "padded_shared", "text": printed["triton"], "shape": shape,
                      "memory": True, "warps": 1, "ctas": 1, "elem": "i16"})  # fmt: skip
        want[len(items) - 1] = {"intervals": [list(p) for p in layout.intervals],
                                "offset": [list(b) for b in layout.linear.in_bases("offset")], "block": []}  # fmt: skip
    answers = run_oracle(items)
    assert len(items) >= 60
    for i, item in enumerate(items):
        assert answers[i]["ok"] and answers[i]["bases"] == want[i], (item["text"], answers[i])


def test_the_workbench_exports_a_padded_layout_in_the_notations_that_say_it():
    """Once the workbench labelled the CuTe text of a padded layout ``triton``."""
    from bankproof.verifier.web import workbench

    blocked = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [0, 1]}>"
    req = {"memory": "(32,32):(33,1)", "shape": "32x32", "dtype": "f32",
           "accesses": [{"name": "r", "kind": "load", "instr": "ld32", "layout": blocked}]}  # fmt: skip
    got = workbench.export(req)["notations"]
    assert got["cute"] == "(32,32):(33,1)"
    assert got["triton"].startswith("#ttg.padded_shared<[32:+1] {offset = [[0, 1], [0, 2]")
    assert workbench.evaluate(req)["accesses"][0]["wavefronts"] == 32
