"""Run whole layouts on the GPU: store a tensor through shared memory with one access, load it
back with another, check every element, and measure the wavefronts with Nsight Compute.

    python -m bankproof.verifier.api.gpu plan PLAN.json [SPEC.toml ...] [--random N] [--matrix] [--wide-matrix] [--stsm-trans]
    ncu --csv --page raw --metrics $(python -m bankproof.gpu_checks.layout_runs metrics) \\
        python -m bankproof.gpu_checks.layout_runs run PLAN.json OUT.npz > NCU.csv
    python -m bankproof.gpu_checks.layout_runs collect PLAN.json OUT.npz NCU.csv RESULTS.json
    python -m bankproof.gpu_checks.layout_runs time PLAN.json TIMES.json

Cases are planned by :mod:`layout_cases` (spec files by ``bankproof.verifier.api.gpu``), kernels
written by :mod:`layout_kernels`; this module runs them, emulates them on the CPU, checks every
loaded element against the id the load layout names, and collects ncu's counts.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from bankproof.gpu_checks.kernels import SMEM_BYTES
from bankproof.gpu_checks.layout_cases import unpack_case
from bankproof.gpu_checks.layout_kernels import case_kernel
from bankproof.gpu_checks.metrics import (
    COPY_INSTRUCTIONS,
    COPY_WAVEFRONTS,
    INSTRUCTIONS,
    LAYOUT_RUNS,
    WAVEFRONTS,
)
from bankproof.models.hardware import instruction


def run(plan_path: str, out_path: str) -> None:
    import cupy as cp

    with open(plan_path) as fh:
        cases = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    modules: dict = {}
    results = {}
    for c in cases:
        name, source, lw_words = case_kernel(c)
        if name not in modules:
            modules[name] = cp.RawModule(code=source, options=(f"-arch=sm_{arch}",)).get_function(name)
        out = cp.zeros(len(c["load"]["addresses"]) * 32 * lw_words, dtype=cp.uint32)
        args = (
            cp.asarray(np.array(c["store"]["addresses"], dtype=np.uint32)),
            cp.asarray(np.array(c["store"]["values"], dtype=np.uint32)),
            cp.asarray(np.array(c["store"]["first"], dtype=np.int32)),
            cp.asarray(np.array(c["load"]["addresses"], dtype=np.uint32)),
            cp.asarray(np.array(c["load"]["first"], dtype=np.int32)),
            out,
        )
        modules[name]((1,), (32 * c["warps"],), args)
        cp.cuda.Device().synchronize()
        results[c["id"]] = cp.asnumpy(out).reshape(len(c["load"]["addresses"]), 32, lw_words)
    np.savez(out_path, **{str(i): results[c["id"]] for i, c in enumerate(cases)})


def _lane_bytes(ins, addr: np.ndarray, lane: int) -> list[tuple[int, int, int]]:
    """(byte address, data byte offset, length) pieces one lane moves in one instruction."""
    if not ins.is_matrix:
        return [(int(addr[lane]), 0, ins.width)]
    pieces = []
    for j in range(ins.matrices):
        for e in range(2):
            if ins.trans:
                row, col = 2 * (lane % 4) + e, lane // 4
            else:
                row, col = lane // 4, 2 * (lane % 4) + e
            pieces.append((int(addr[8 * j + row]) + 2 * col, 4 * j + 2 * e, 2))
    return pieces


def emulate(case: dict) -> np.ndarray:
    """What the kernel loads, computed on the CPU: the reference for ``run``'s output."""
    buf = np.zeros(SMEM_BYTES + 16, dtype=np.uint8)
    st_ins, ld_ins = instruction(case["store"]["instr"]), instruction(case["load"]["instr"])
    st_addr = np.array(case["store"]["addresses"])
    st_val = np.array(case["store"]["values"], dtype=np.uint32)
    raw = st_val.view(np.uint8).reshape(st_addr.shape + (-1,))
    for i in range(st_addr.shape[0]):
        for lane in range(32):
            for a, off, n in _lane_bytes(st_ins, st_addr[i], lane):
                buf[a : a + n] = raw[i, lane, off : off + n]
    ld_addr = np.array(case["load"]["addresses"])
    words = ld_ins.data_words
    out = np.zeros(ld_addr.shape + (words * 4,), dtype=np.uint8)
    for i in range(ld_addr.shape[0]):
        for lane in range(32):
            for a, off, n in _lane_bytes(ld_ins, ld_addr[i], lane):
                out[i, lane, off : off + n] = buf[a : a + n]
    return out.view(np.uint32).reshape(ld_addr.shape + (words,))


def check_data(case: dict, words: np.ndarray) -> int:
    """How many loaded elements differ from what the load layout names."""
    got = unpack_case(words, case["load"]["vector"], case["elem_bits"])
    return int((got != np.array(case["load"]["expect"])).sum())


def _instructions(row: dict, op: str) -> int:
    """Shared-memory instructions of one direction: ncu counts ``LDS``/``STS`` and ``LDSM``/``STSM``
    under separate metrics; a matrix metric the row lacks counts as zero."""
    from bankproof.gpu_checks.measure import number_value

    plain = number_value(row[INSTRUCTIONS[op]])
    matrix = number_value(row.get(INSTRUCTIONS[op + "sm"], ""))
    return plain + (matrix or 0)


def collect(plan_path: str, out_path: str, ncu_path: str, results_path: str) -> None:
    from bankproof.gpu_checks.measure import environment, number_value, parse_ncu_csv

    with open(plan_path) as fh:
        cases = json.load(fh)
    data = np.load(out_path)
    with open(ncu_path) as fh:
        rows = [r for r in parse_ncu_csv(fh.read()) if r.get("Kernel Name", "").startswith("k_layout")]
    if len(rows) != len(cases):
        raise SystemExit(f"ncu reported {len(rows)} launches for {len(cases)} cases")
    runs = []
    for i, (c, r) in enumerate(zip(cases, rows)):
        bad = check_data(c, data[str(i)])
        st_ins = instruction(c["store"]["instr"])
        if st_ins.is_copy:  # a cp.async: its own metrics (Nsight Compute sees no .cg wavefronts)
            store = number_value(r.get(COPY_WAVEFRONTS[st_ins.variant], ""))
            store_n = number_value(r.get(COPY_INSTRUCTIONS, ""))
        else:
            store, store_n = number_value(r[WAVEFRONTS["st"]]), _instructions(r, "st")
        runs.append(
            {
                "id": c["id"],
                "shape": c["shape"],
                "elem_bits": c["elem_bits"],
                "memory": c["memory"],
                "store_layout": c["store_layout"],
                "load_layout": c["load_layout"],
                "store_instr": c["store"]["instr"],
                "load_instr": c["load"]["instr"],
                "predicted": {
                    "store": c["store"]["predicted"],
                    "load": c["load"]["predicted"],
                    "store_instructions": c["store"]["instructions"],
                    "load_instructions": c["load"]["instructions"],
                },
                "measured": {
                    "store": store,
                    "load": number_value(r[WAVEFRONTS["ld"]]),
                    "store_instructions": store_n,
                    "load_instructions": _instructions(r, "ld"),
                },
                "data_mismatches": bad,
            }
        )
    import datetime

    with open(results_path, "w") as fh:
        json.dump(
            {
                "schema": 1,
                "kind": "layout_runs",
                **environment(),
                "date": datetime.date.today().isoformat(),
                "runs": runs,
            },
            fh,
            separators=(",", ":"),
        )
    ok = sum(1 for x in runs if x["data_mismatches"] == 0 and x["measured"] == x["predicted"])
    print(
        f"{len(runs)} layout runs, {ok} with correct data and measured = predicted (wavefronts and instructions) -> {results_path}"
    )


def time_cases(plan_path: str, results_path: str, iters: int = 200) -> None:
    """Time each planned case's round trip (store the tile, load it back) on many blocks, with
    addresses computed from :func:`address_table` (cases whose addresses are not linear are
    listed as not timed): median of 20 runs, ns per tile."""
    import datetime
    import statistics

    import cupy as cp
    from bankproof.gpu_checks.layout_cases import address_table
    from bankproof.gpu_checks.layout_kernels import timed_kernel_source
    from bankproof.gpu_checks.measure import environment

    with open(plan_path) as fh:
        cases = json.load(fh)
    dev = cp.cuda.Device()
    arch, sms = (
        int(dev.compute_capability),
        cp.cuda.runtime.getDeviceProperties(dev.id)["multiProcessorCount"],
    )
    rows = []
    for c in cases:
        tables = [address_table(c[k]["addresses"], c[k]["first"]) for k in ("store", "load")]
        if None in tables:
            rows.append(
                {"id": c["id"], "timed": False, "reason": "addresses not linear in (lane, instruction, warp)"}
            )
            continue
        per_warp = tuple(c[k]["first"][1] - c[k]["first"][0] for k in ("store", "load"))
        tile = int(np.prod(c["shape"])) * c["elem_bits"] // 8
        st, ld = instruction(c["store"]["instr"]), instruction(c["load"]["instr"])
        name, src = timed_kernel_source(st, ld, per_warp, tile)
        fn = cp.RawModule(code=src, options=(f"-arch=sm_{arch}",)).get_function(name)
        threads, blocks = 32 * c["warps"], sms * 8
        sink = cp.zeros(blocks * threads, dtype=cp.uint32)
        args = [cp.asarray(np.array(t, dtype=np.uint32)) for t in tables]
        fn((blocks,), (threads,), (*args, sink, np.int32(iters)))
        times = []
        for _ in range(20):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn((blocks,), (threads,), (*args, sink, np.int32(iters)))
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3)
        t = statistics.median(times)
        rows.append({"id": c["id"], "timed": True, "store_instr": st.short, "load_instr": ld.short,
                     "predicted": {"store": c["store"]["predicted"], "load": c["load"]["predicted"]},
                     "blocks": blocks, "iterations": iters, "ns_per_tile": t / (blocks * iters) * 1e9})  # fmt: skip
        print(f"{c['id']}: {rows[-1]['ns_per_tile']:.2f} ns per tile")
    with open(results_path, "w") as fh:
        json.dump({"schema": 1, "kind": "layout_times", **environment(), "date": datetime.date.today().isoformat(),
                   "rows": rows}, fh, indent=1)  # fmt: skip


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else ""
    if cmd == "metrics":
        print(",".join(LAYOUT_RUNS))
    elif cmd == "run":
        run(argv[1], argv[2])
    elif cmd == "collect":
        collect(argv[1], argv[2], argv[3], argv[4])
    elif cmd == "time":
        time_cases(argv[1], argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
