"""The recorded transpose benchmark replayed: its predicted wavefronts, recomputed now from the
benchmark's layouts, equal what was recorded and what Nsight Compute measured for one tile."""

from __future__ import annotations

import json

from bankproof.gpu_checks.results import RESULTS
from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate

from lab.gpu.gpu_transpose import TILES, kernel_of, layouts, memories


def test_transpose_bench_measures_as_predicted():
    data = json.loads((RESULTS / "h200-2026-11-22-transpose.json").read_text())
    assert data["kind"] == "transpose_bench" and data["gpu"] and data["ncu"]
    recorded = {kernel_of(r): r for r in data["rows"]}
    measured = {m["kernel"]: m["measured"] for m in data["ncu_one_tile"]}
    assert len(recorded) == len(measured) == 3 * len(TILES)
    for shape, bits, warps in TILES:
        store, load = layouts(shape, bits, warps)
        for swz, mem in memories(shape, store, load, bits).items():
            st = build_access(store, mem, bits, "store")
            ld = build_access(load, mem, bits, "load")
            predicted = {
                "store": int(evaluate(st.instr, st.addresses)[0].sum()),
                "load": int(evaluate(ld.instr, ld.addresses)[0].sum()),
            }
            row = recorded[f"k_bench_{shape[0]}x{shape[1]}_{bits}_{swz}"]
            assert row["predicted_wavefronts"] == predicted == measured[kernel_of(row)], kernel_of(row)
            assert (row["store_instr"], row["load_instr"]) == (st.instr.short, ld.instr.short)
    for r in data["rows"]:
        if r["swizzle"] == "synthesized":
            assert r["speedup_vs_classic_xor"] >= 1.0, kernel_of(r)
