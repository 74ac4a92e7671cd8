"""``bankproof triton corpus --arch gfx942,gfx950``: the built-in corpus compiles for AMD targets
with Triton 3.9.0 on the CPU (TTGIR, and AMDGCN), is scanned with the published LDS models, and
matches its committed baseline; what is not counted names why (count printed)."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
from bankproof.models import target
from bankproof.verifier.triton import corpus

from lab.findings import findings_markdown

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra"),
    pytest.mark.compile,
]

LDS_ARCHS = [a for a in target.ARCHS if target.get(a).model == "lane groups"]
LDS_ARCHS = [a for a in target.ARCHS if target.get(a).model == "lane groups"]
BASELINE = Path(__file__).resolve().parent / "data" / "triton_corpus_baseline_amd.json"


@pytest.fixture(scope="module")
def entries():
    return corpus.run_corpus(corpus.builtin_configs(), LDS_ARCHS)


def test_amd_corpus_compiles_scans_and_matches_its_baseline(entries, capsys):
    for arch in LDS_ARCHS:
        configs = [e for e in entries if e.arch == arch]
        assert len(configs) >= 40 and all(e.compiled for e in configs), [e.error for e in configs]
    baseline = corpus.load_baseline(str(BASELINE))
    assert corpus.compare(entries, baseline) == ([], [])
    assert corpus.flat_accesses(entries) == baseline
    why: Counter = Counter()
    for e in (x.to_dict() for x in entries):
        assert e["report"]["target"] == f"hip:{e['arch']}"
        for b in e["report"]["buffers"]:
            for a in b["accesses"]:
                if a["wavefronts"] is not None:
                    assert a["rests_on"] == "assumed (published)" and a["rule"].startswith(a["instr"])
                    why["counted"] += 1
                else:
                    reason = a["error"]
                    assert "no published lane grouping" in reason or "sub-dword" in reason, reason
                    why["no published grouping" if "grouping" in reason else "sub-dword"] += 1
    with capsys.disabled():
        print(
            f"\nAMD corpus: {len(entries)} (config, arch) pairs compiled and scanned; accesses: {dict(why)}"
        )
    assert why["counted"] >= 50


def test_amd_findings_document_is_current(entries):
    """docs/explanation/triton-findings-amd.md is exactly what the AMD corpus produces now."""
    doc = (BASELINE.parents[2] / "docs" / "explanation" / "triton-findings-amd.md").read_text()
    assert doc == findings_markdown(entries, "tests/test_triton_corpus_amd.py")
    assert "Accesses above their ideal (one wavefront per phase): 63." in doc
