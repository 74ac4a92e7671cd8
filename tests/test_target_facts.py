"""Target facts live on the target (issue 56, item 5): outside ``models/`` nothing branches on a
model's name (``t.model == "phases"``); it asks the target's capability (``row_bytes``,
``cost_unit``, ``counts_from_bases``, ``picks_instructions``, ``partial_warps``)."""

from __future__ import annotations

import re
from pathlib import Path

from bankproof.models import target

ROOT = Path(__file__).resolve().parent.parent
_BRANCH = re.compile(
    r"\.model\s*[!=]=|model\s*[!=]=\s*\"(?:phases|lane groups)\"|\"(?:phases|lane groups)\"\s*[!=]="
)


def branches(text: str) -> list[str]:
    """Comparisons with a model's name in a module's text."""
    return _BRANCH.findall(text)


def test_no_branch_on_a_model_name_outside_models():
    bad = {}
    for folder in ("verifier", "proofs", "gpu_checks", "bankproof"):
        for p in (ROOT / folder).rglob("*.py"):
            if branches(p.read_text()):
                bad[str(p.relative_to(ROOT))] = branches(p.read_text())
    assert bad == {}


def test_the_branch_test_sees_one():
    assert branches('if t.model == "lane groups":') and branches("if r.model != x:")
    assert not branches("if t.counts_from_bases:")


def test_the_capabilities_answer_what_the_branches_did():
    for arch, t in target.TARGETS.items():
        lanes = t.model == "lane groups"
        assert t.row_bytes == (t.banks * 4 if lanes else 128), arch
        assert target.units(t.model) == (("lane", "cycle") if lanes else ("wavefront", "wavefront"))
        assert t.counts_from_bases == t.picks_instructions == t.partial_warps == (not lanes)
        assert t.cost_unit == target.units(t.model)[1]
