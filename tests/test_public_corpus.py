"""A second corpus after public Triton code (``lab/public_kernels.py``: the tutorials' softmax,
layer norm, grouped and persistent matmul, causal attention; the library kinds: RMS norm,
cross-entropy, MoE gathered matmul, chunked linear attention, group norm), compiled here by Triton
3.9.0 and launched on an H200 (``gpu_checks/results/h200-2026-11-26-public-kernels.json``, with
each launch's Nsight Compute source page). Every total the ledger gives as a number equals the
counters; where a cp.async's warp reads rows shorter than a 128-byte line the ledger gives a range
(and says the kernel is not complete), and the measurement lies in it; every modelled source line
reproduces its measured wavefronts."""

from __future__ import annotations

import importlib.util
import json

import pytest
from bankproof.gpu_checks.results import RESULTS

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs the triton extra")
RECORD = json.loads((RESULTS / "h200-2026-11-26-public-kernels.json").read_text())
CLASS = {"ldgsts_cg_wavefronts": "ldgsts_bypass", "ldgsts_ca_wavefronts": "ldgsts"}


@pytest.fixture(scope="module")
def ledgers():
    from bankproof.verifier.triton import corpus, ledger
    from bankproof.verifier.triton.scan import scan_text

    from lab.public_kernels import CONFIGS

    configs = {c["name"]: c for c in CONFIGS}
    out = {}
    for run in RECORD["runs"]:
        ttgir, ptx = corpus.compile_kernel(configs[run["name"]], "sm90", "lab/public_kernels.py")
        out[run["name"]] = ledger.build(scan_text(ttgir), ttgir, ptx, {**run["args"], **ledger.ONE_CTA})
    return out


def test_every_number_equals_the_counters_and_every_range_holds_them(ledgers, capsys):
    from lab.gpu.triton_kernels import compare

    exact, ranged = [], []
    for run in RECORD["runs"]:
        led = ledgers[run["name"]]
        diffs = compare(run["measured"], led["totals"])
        for key, (predicted, measured) in diffs.items():
            assert predicted is None and key in CLASS, (run["name"], key, predicted, measured)
            lo, hi = led["totals"][CLASS[key]]["range"]["wavefronts"]
            assert lo <= measured <= hi, (run["name"], lo, measured, hi)
        if diffs:
            ranged.append(run["name"])
            assert led["incomplete"] and "global lines" in " ".join(led["incomplete"])
        else:
            exact.append(run["name"])
    with capsys.disabled():
        print(f"\npublic corpus: {len(exact)} of {len(RECORD['runs'])} kernels exact, {len(ranged)} in their range")
    assert (len(exact), len(ranged)) == (11, 2)


def test_every_modelled_source_line_reproduces_its_measurement(ledgers):
    from bankproof.verifier.triton.profile import explain, read_export

    modelled = 0
    for run in RECORD["runs"]:
        for r in explain(ledgers[run["name"]], read_export(run["source_page"])):
            if r["modelled"]:
                modelled += 1
                assert r["agrees"], (run["name"], r)
    assert modelled == 57
