"""The PTX machine against the Triton ledger: every built-in corpus kernel compiled for sm90, each
kernel's PTX analysed by ``bankproof kernel`` (one CTA, integer arguments 256, pointers at their
defaults), each ledger entry's warp instructions and wavefronts (per execution times its
executions) compared with the machine's for the same PTX instructions, wherever both decide. The
two read the PTX independently (the ledger from the TTGIR's loops and its lowering rules, the machine
by running the code), so agreement checks both.

Left out, and counted: entries the ledger cannot total (a loop bound it does not know), TMA
descriptor rewrites (``tensormap.replace``: the ledger's measured ld/st rule; the machine names them
not modelled), instructions after a branch on loaded data, and ``cp.async.ca`` copies whose count is
their global lines (the ledger takes the layout's lower bound; the machine counts the lines of the
addresses these arguments give; measured on one Triton fp8 matmul, the machine's count was right:
gpu_checks/results/h100-2026-11-28-kernel-truth-2.json.gz), and zero-fill ``cp.async.cg`` copies
(not modelled: their measured count is not the store's)."""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.triton, pytest.mark.compile]


@pytest.fixture(scope="module")
def corpus_sm90():
    pytest.importorskip("triton")
    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.jobs import compile_kernel, make_entry

    out = []
    for c in builtin_configs():
        ttgir, ptx = compile_kernel(c, "sm90")
        out.append((c, ptx, make_entry(c["name"], "sm90", (ttgir, ptx), None), ttgir))
    return out


def test_machine_equals_the_ledger(corpus_sm90):
    from bankproof.verifier.api.kernel import launch_of
    from bankproof.verifier.kernel.analyse import analyse, source_from_ptx
    from bankproof.verifier.kernel.costs import ZFILL_CG

    agree, differ, left = 0, [], {"loop": 0, "tensormap": 0, "data": 0, "ca lines": 0, "cg zero-fill": 0}
    for c, ptx, entry, ttgir in corpus_sm90:
        ints = [k for k, v in c["signature"].items() if v != "constexpr"]
        args = {str(i): 256 for i, k in enumerate(ints) if not c["signature"][k].startswith("*")}
        warps = int(re.search(r'"ttg.num-warps" = (\d+)', ttgir).group(1))
        r = analyse(source_from_ptx(ptx, c["name"]), launch_of(warps * 32, 1, (0, 0, 0), 0, args))
        by_line = {i.ptx_line: i for i in r.instructions}
        for e in entry.ledger.to_dict()["entries"]:
            if not e.get("counted") or e.get("wavefronts") is None or e["family"] not in ("lsu", "ldgsts"):
                continue
            reps = [by_line.get(p) for p in e["ptx_lines"]]
            if e.get("executions") is None:
                left["loop"] += 1
            elif any(x is not None and x.family == "tensormap" for x in reps):
                left["tensormap"] += 1
            elif any(x is not None and x.reason == ZFILL_CG for x in reps):
                left["cg zero-fill"] += 1
            elif any(x is None or x.wavefronts is None for x in reps):
                left["data"] += 1
            else:
                got = (sum(x.instructions for x in reps), sum(x.wavefronts for x in reps))
                want = (e["instructions"] * e["executions"], e["wavefronts"] * e["executions"])
                if got == want:
                    agree += 1
                elif e["family"] == "ldgsts" and e.get("cache") == ["ca"] and got[0] == want[0]:
                    left["ca lines"] += 1
                else:
                    differ.append((c["name"], e["location"], e["instr"], want, got))
    print(f"machine vs ledger: {agree} entries equal; left out {left}")
    assert not differ, differ[:5]
    assert agree >= 200
