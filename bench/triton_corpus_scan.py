"""``triton scan --ptx`` on every kernel of the project's real corpus (issue: speed; the 73 kernels
of ``gpu_checks/results/h200-2026-11-26-real-kernels.json``, compiled here by Triton 3.9.0): the
whole analysis of one compile (reading the TTGIR and the PTX once, the scan, the whole-kernel
ledger, the MMA descriptor check), the best of six cold runs each, against 50 ms for the worst
kernel. The runs are spread over three passes of the corpus (two each): a slow spell of a shared
machine then slows one pass, not every run of one kernel. Baseline in the same run: reading the
texts alone (``read_source``). Needs the triton extra (skipped with a message without it).

    python bench/triton_corpus_scan.py
"""

from __future__ import annotations

import importlib.util
import json
import time

from bankproof.gpu_checks.results import RESULTS
from bankproof.models.access import clear_caches

TARGET_MS = 50.0
PASSES, RUNS_PER_PASS = 3, 2


def main() -> None:
    if importlib.util.find_spec("triton") is None:
        print("skipped: needs the triton extra (the corpus is compiled here)")
        return
    from bankproof.verifier.triton import corpus, pipeline
    from bankproof.verifier.triton.accesses import count_cached, parse_cached
    from bankproof.verifier.triton.source import read_source

    record = json.loads((RESULTS / "h200-2026-11-26-real-kernels.json").read_text())
    configs = {
        c["name"]: (c, f) for f in record["kernels_files"] for c in corpus.load_kernels_file(f).CONFIGS
    }
    compiled = []
    for run in record["runs"]:
        config, path = configs[run["name"]]
        compiled.append((run["name"], *corpus.compile_kernel(config, "sm90", path)))
    whole: dict[str, list[float]] = {name: [] for name, *_ in compiled}
    read: dict[str, list[float]] = {name: [] for name, *_ in compiled}
    for _ in range(PASSES):
        for name, ttgir, ptx in compiled:
            for _ in range(RUNS_PER_PASS):
                parse_cached.cache_clear()
                count_cached.cache_clear()
                clear_caches()
                t = time.perf_counter()
                src = read_source(ttgir, "kernel.ttgir", ptx)
                read[name].append(time.perf_counter() - t)
                pipeline.analyse(src, None)
                whole[name].append(time.perf_counter() - t)
    rows = [
        (min(whole[name]) * 1e3, min(read[name]) * 1e3, name, len(ptx.splitlines()))
        for name, ttgir, ptx in compiled
    ]
    rows.sort(reverse=True)
    for ms, read_ms, name, lines in rows[:5]:  # the five slowest, named
        print(f"{name:40s} {lines:5d} PTX lines: analysis {ms:5.1f} ms, reading {read_ms:4.1f} ms (baseline)")
    worst = rows[0][0]
    over = sum(ms > TARGET_MS for ms, *_ in rows)
    print(f"{len(rows)} kernels, {over} over {TARGET_MS:g} ms; median {rows[len(rows) // 2][0]:.1f} ms")
    verdict = "PASS" if worst <= TARGET_MS else "FAIL"
    print(f"worst kernel {worst:.1f} ms (target <= {TARGET_MS:g} ms): {verdict}")


if __name__ == "__main__":
    main()
