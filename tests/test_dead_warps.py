"""cp.async in warps predicated off, measured (``gpu_checks/results/h200-2026-11-26-dead-warps.json``:
one CTA of 8 warps, copies of 4/8/16 bytes ``.ca`` and 16 bytes ``.cg``, with data and zero-filled,
guarded by warp and lane masks), and the rule Triton's lowering gives the scan: only the lanes and
warps that carry none of the layout's free bits copy."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from bankproof.gpu_checks.results import RESULTS
from bankproof.models.hardware import instruction, wavefront_counts
from bankproof.models.layout import LinearLayout
from bankproof.verifier.engine.answer import AccessProblem, issuers

DATA = json.loads((RESULTS / "h200-2026-11-26-dead-warps.json").read_text())
G = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts"
WIDTH = {"cp4": 4, "cp8": 8, "cp16": 16}


def _live(run: dict) -> tuple[int, int]:
    """(warps with a lane on, the store wavefronts of those lanes) for one launch."""
    kind = re.match(r"dw_(cp\d+)", run["kernel"]).group(1)
    width = WIDTH[kind]
    lanes = np.array([(run["lane_mask"] >> i) & 1 for i in range(32)], dtype=bool)
    warps = [w for w in range(DATA["warps"]) if (run["warp_mask"] >> w) & 1]
    offs = np.array([[(w * 32 + lane) * width for lane in range(32)] for w in warps] or [[0] * 32])
    wf = int(wavefront_counts(instruction(f"st{8 * width}"), offs, lanes[None]).sum()) if warps else 0
    return len(warps), wf


def test_ca_copies_cost_only_the_lanes_on_and_count_only_warps_with_one():
    """Every .ca launch (24 with data, 24 zero-filled, warp 0 guarded from %tid too): ldgsts
    instructions = warps with a lane on, wavefronts = those lanes' store, dead warps 0."""
    runs = [r for r in DATA["runs"] if "cg" not in r["kernel"]]
    assert len(runs) == 42
    for r in runs:
        warps, wf = _live(r)
        assert r["sm__sass_inst_executed_op_ldgsts.sum"] == warps, r
        assert r[f"{G}.sum"] == r[f"{G}_cache_access.sum"] == wf, r


def test_cg_bypass_counter_misreads_guarded_copies():
    """The instrumented .cg counter: 0 for every copy guarded @P (even all 8 warps live, 4096 bytes
    moved), and every executing warp counted as live for the copy guarded @!P (warp 0 of 8: 32
    for 4); instructions and bytes are right. ptxas's guard polarity, from the SASS recorded."""
    cg = [r for r in DATA["runs"] if "cg" in r["kernel"]]
    assert len(cg) == 14
    for r in cg:
        warps, wf = _live(r)
        assert r["sm__sass_inst_executed_op_ldgsts.sum"] == warps
        assert r["sm__sass_data_bytes_mem_shared_op_ldgsts.sum"] == wf * 128
        expect = 0 if r["kernel"].endswith("_arg") else 8 * 4  # @P: nothing; @!P: all 8 warps x 4
        assert r[f"{G}_cache_bypass.sum"] == expect, r
    sass = DATA["sass"]
    assert re.search(r"Function : dw_cp16cg_arg\n.*@P0 LDGSTS\.E\.BYPASS\.128", sass)
    assert re.search(r"Function : dw_cp16cg_tid\n.*\n.*@!P0 LDGSTS\.E\.BYPASS\.128", sass)


def _layout(regs, lanes, warps, shape):
    return LinearLayout.from_bases({"register": regs, "lane": lanes, "warp": warps},
                                   {f"dim{i}": s for i, s in enumerate(shape)})  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_free_masks_pick_one_writer_per_element(seed):
    """Random layouts with repeats: the inputs with no free bit map one-to-one onto the image."""
    rng = np.random.default_rng(seed)
    n_out = int(rng.integers(3, 7))
    shape = (1 << n_out,)

    def basis():
        return [int(rng.integers(0, 1 << n_out)) if rng.random() < 0.7 else 0]

    lay = _layout([basis() for _ in range(int(rng.integers(0, 3)))], [basis() for _ in range(5)],
                  [basis() for _ in range(int(rng.integers(0, 4)))], shape)  # fmt: skip
    free = lay.free_masks()
    table = lay.table()  # register fastest, then lane, warp
    nreg, nwarp = lay.in_dim_size("register"), lay.in_dim_size("warp")
    keep = [(r, lane, w) for w in range(nwarp) for lane in range(32) for r in range(nreg)
            if not (r & free["register"] or lane & free["lane"] or w & free["warp"])]  # fmt: skip
    image = {tuple(table[r + nreg * (lane + 32 * w)]) for r, lane, w in keep}
    assert len(image) == len(keep) == len({tuple(x) for x in table})


def test_triton_guard_on_a_vector_repeated_in_every_warp():
    """A 32-element f32 vector over 8 warps (``#blocked<{sizePerThread=[1], threadsPerWarp=[32],
    warpsPerCTA=[8]}>``, an attention kernel's row statistics): Triton's PTX guards the copy with
    ``warp == 0``; only warp 0 issues."""
    from bankproof.models import target

    lay = _layout([], [[1], [2], [4], [8], [16]], [[0], [0], [0]], (32,))
    mem = LinearLayout.identity1d(32, "offset", "dim0")
    a = target.build("sm90", lay, mem, 32, "store", "cp4.ca")
    act = issuers(AccessProblem(mem, lay, 32, "store", free_lanes_off=True), a)
    assert act.any(axis=1).tolist() == [True] + [False] * 7 and act[0].all()
    assert int(target.count("sm90", a, act).counts.sum()) == 1
    assert int(target.count("sm90", a).counts.sum()) == 8
