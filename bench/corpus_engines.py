"""Corpus throughput: the local engine against Ray on this machine, and Ray on a simulated cluster
(``ray.cluster_utils.Cluster``, nodes of 1 CPU in this one machine), with peak memory per worker.

Target: Ray's throughput (compiles per second per core, Ray's start-up excluded) within 15% of the
local engine's on this machine. Each run compiles the same jobs (the built-in corpus expanded, sm90)
into a Triton cache of its own (cold), so no run reuses another's compiles.

    python bench/corpus_engines.py [JOBS]      # default 40
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")


def jobs(n: int) -> list[tuple]:
    from bankproof.verifier.triton.corpus_configs import builtin_configs
    from bankproof.verifier.triton.corpus_generate import expand_configs

    return [(c, "sm90", None) for c in expand_configs(builtin_configs(), n, seed=7)]


def timed(engine: str, work: list, workers: int = 2, stats: list | None = None) -> tuple[float, list[dict]]:
    from bankproof.verifier.triton.dispatch import run

    t = time.perf_counter()
    entries = run(work, engine=engine, address=None, workers=workers, limit_s=300, stats=stats)
    return time.perf_counter() - t, entries


def cold_cache() -> None:
    os.environ["BANKPROOF_TRITON_CACHE"] = tempfile.mkdtemp(prefix="bp-bench-cache-")


def main() -> None:
    import ray
    from ray.cluster_utils import Cluster

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    work = jobs(n)
    cores = 2
    cold_cache()
    local_s, local = timed("local", work)
    cold_cache()
    t = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    start_s = time.perf_counter() - t
    stats: list = []
    ray_s, on_ray = timed("ray", work, stats=stats)
    ray.shutdown()
    same = [e.report for e in local] == [e.report for e in on_ray]
    rate = {"local": len(work) / local_s / cores, "ray": len(work) / ray_s / cores}
    print(f"{len(work)} compiles (sm90), 2 cores: local {local_s:.1f} s ({rate['local']:.2f} /s/core), "
          f"Ray {ray_s:.1f} s ({rate['ray']:.2f} /s/core; Ray start-up {start_s:.1f} s, not counted); "
          f"same answers: {same}")  # fmt: skip
    peak = max((s.get("compile_peak_kb", 0) for s in stats), default=0)
    peak_w = max((s.get("ray_worker_peak_kb", 0) for s in stats), default=0)
    print(
        f"peak memory per worker: compile subprocess {peak / 1024:.0f} MiB, "
        f"Ray worker {peak_w / 1024:.0f} MiB"
    )
    scaling = []
    for nodes in (1, 2, 3):
        cold_cache()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        secs, _ = timed("ray", work[: max(8, n // 2)])
        scaling.append((nodes, max(8, n // 2) / secs))
        ray.shutdown()
        cluster.shutdown()
    print("simulated cluster (1-CPU nodes on this 2-core machine): " +
          ", ".join(f"{k} node(s) {r:.2f} compiles/s" for k, r in scaling))  # fmt: skip
    ok = rate["ray"] >= 0.85 * rate["local"] and same
    print(
        f"Ray throughput {rate['ray']:.2f} vs local {rate['local']:.2f} /s/core (target >= 85%): "
        f"{'PASS' if ok else 'FAIL'}"
    )
    print(
        f"2 nodes vs 1: x{scaling[1][1] / scaling[0][1]:.2f} (scales with cores: "
        f"{'PASS' if scaling[1][1] >= 1.3 * scaling[0][1] else 'FAIL'})"
    )


if __name__ == "__main__":
    main()
