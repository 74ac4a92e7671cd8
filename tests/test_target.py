"""The target seam: adding an arch is one entry of ``models/target.py``'s table (the design notes'
worked example, run): every command accepts it, TTGIR naming it is counted with its model, and
what it has follows from its entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.verifier.triton.scan import scan_text

import bankproof

SPEC = {"shape": [16, 32], "dtype": "f32", "memory": {"formula": "32*m + (n ^ m)"},
        "access": [{"name": "read", "kind": "load",
                    "layout": {"bases": {"register": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]],
                                         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}}}]}  # fmt: skip


@pytest.fixture
def sm120(monkeypatch):
    t = target.Target("sm120", "nvidia", "Blackwell (RTX 50)", 32, 32, "phases", "assumed", ("cuda", 120),
                      target.ALL_COMMANDS, cc=120)  # fmt: skip
    monkeypatch.setitem(target.TARGETS, "sm120", t)
    target.clear_caches()
    return t


def test_an_arch_added_as_one_entry_is_accepted_everywhere(sm120):
    r = bankproof.verify(spec={**SPEC, "arch": "sm120"})
    assert r.accesses[0].rests_on == "assumed"
    assert r.accesses[0].wavefronts == bankproof.verify(spec=SPEC).accesses[0].wavefronts
    assert bankproof.synth(spec={**SPEC, "arch": "sm120"}).verdict in ("proved", "refuted")
    assert bankproof.wavefronts("ld32", [4 * i for i in range(32)], arch="sm120").rests_on == "assumed"
    assert target.from_triton("cuda:120") is sm120 and sm120.has("stsm.x4")


def test_ttgir_for_the_new_arch_is_counted_with_its_model(sm120):
    text = (Path(__file__).resolve().parents[1] / "verifier" / "triton" / "sample.ttgir").read_text()
    rep = scan_text(text.replace("cuda:90", "cuda:120"))
    assert rep.target == "cuda:120"
    assert [a.wavefronts for a in rep.buffers[0].accesses] == [16, 256]


def test_an_unknown_arch_is_refused_with_the_list():
    with pytest.raises(InputError, match="arch must be one of sm80, sm90, sm100, gfx942, gfx950"):
        bankproof.verify(spec={**SPEC, "arch": "sm75"})
