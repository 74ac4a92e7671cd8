"""What Nsight Compute's shared ``op_misc`` wavefronts are made of, measured on an H200
(``gpu_checks/results/h200-2026-11-26-op-misc.json``, ``lab/gpu/op_misc.py``: one CTA of 4 warps
running N of one instruction): every warp-level ``SHFL`` is one op_misc wavefront; barriers,
``__syncwarp``, votes and mbarrier arrives are none; shared atomics count under ``op_atom``, not
op_misc. The replay holds the record to those rules, so a re-run that says otherwise fails."""

from __future__ import annotations

import json

from bankproof.gpu_checks.results import RESULTS

RECORD = json.loads((RESULTS / "h200-2026-11-26-op-misc.json").read_text())
MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
ATOM = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
RUNS = {r["kernel"]: r for r in RECORD["runs"]}
WARPS = RECORD["warps"]


def extra(kind: str, n: int, metric: str = MISC) -> int:
    return RUNS[f"probe_{kind}_{n}"][metric] - RUNS["probe_empty_1"][metric]


def test_every_warp_shuffle_is_one_misc_wavefront():
    assert [extra("shfl", n) for n in (8, 32)] == [8 * WARPS, 32 * WARPS]
    sass = (RESULTS / "h200-2026-11-26-op-misc.sass.txt").read_text()
    block = sass.split("Function : probe_shfl_8")[1].split("Function :")[0]
    assert block.count("SHFL.BFLY") == 8  # 8 SHFL per warp in the SASS


def test_barriers_votes_and_mbarrier_arrives_are_no_misc_wavefronts():
    for kind in ("bar", "syncwarp", "vote", "mbarrier_arrive"):
        assert [extra(kind, n) for n in (8, 32)] == [0, 0], kind


def test_shared_atomics_count_under_op_atom():
    assert [extra("atom_shared", n) for n in (8, 32)] == [0, 0]
    assert [extra("atom_shared", n, ATOM) for n in (8, 32)] == [8 * WARPS, 32 * WARPS]
