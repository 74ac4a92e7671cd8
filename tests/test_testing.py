"""``bankproof.testing``: the assertions kernel authors put in their own suites."""

from __future__ import annotations

import json
import re

import pytest

import bankproof
from bankproof.testing import assert_conflict_free, assert_wavefronts

ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)
COLS = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
KW = {"store": ROWS, "load": COLS, "shape": (16, 32), "dtype": "f32"}


def test_conflict_free_passes_and_returns_the_result():
    r = assert_conflict_free("32*m + (n ^ (2*m))", **KW)
    assert r.verdict == "proved"
    assert assert_conflict_free("32*m + (n ^ m)", access="store", **KW).access("store").wavefronts == 16


def test_conflict_names_the_lanes_and_a_reproducer_that_replays():
    with pytest.raises(AssertionError) as e:
        assert_conflict_free("32*m + (n ^ m)", **KW)
    text = str(e.value)
    assert text.startswith("access 'load' (ld.shared.b32): 32 wavefronts, ideal 16: 2-way conflict")
    assert "lanes 1 and 16 of warp 0, instruction 0: bank 1, different words" in text
    assert "lane  1: (m=1, n=0) byte 132" in text and "lane 16: (m=0, n=1) byte 4" in text
    line = re.search(r"reproduce: echo '(.*)' \| bankproof wavefronts --input -", text).group(1)
    case = json.loads(line)
    assert bankproof.wavefronts(case["instr"], case["byte_offsets"]).wavefronts == 2


def test_wavefronts_exact_counts():
    assert_wavefronts({"store": 16, "load": 256}, "32*m + n", **KW)
    assert_wavefronts(256, "32*m + n", access="load", **KW)
    with pytest.raises(AssertionError, match="expected 16 wavefronts, got:\naccess 'load' .*256 wavefronts"):
        assert_wavefronts({"load": 16}, "32*m + n", **KW)
    with pytest.raises(AssertionError, match="one expected count needs access="):
        assert_wavefronts(16, "32*m + n", **KW)
    with pytest.raises(AssertionError, match="no access named 'read' \\(the accesses are store, load\\)"):
        assert_wavefronts({"read": 16}, "32*m + n", **KW)


def test_bad_input_is_an_input_error_not_an_assertion():
    with pytest.raises(bankproof.InputError, match="dtype: name is unknown"):
        assert_conflict_free("32*m + n", store=ROWS, shape=(16, 32), dtype="f13")
