"""Where the corpus's compiles run: worker processes on this machine (``local``, the default) or Ray
tasks on a cluster (``ray``), and the results directory that makes a run resumable and incremental.
Both engines compile in worker processes and scan with the same function (:func:`~bankproof.
verifier.triton.corpus.make_entry`; a Ray task does both, the local engine scans as results come
back), so their entries are the same; the order of the entries is the jobs', whatever order they
finish in.

>>> run([], engine="local", address=None, workers=1, limit_s=1.0)
[]
"""

from __future__ import annotations

from collections.abc import Callable

from bankproof.models.errors import InputError
from bankproof.verifier.triton.compile_pool import run_jobs
from bankproof.verifier.triton.corpus_records import CorpusEntry
from bankproof.verifier.triton.store import Artifact, ResultStore, job_key

ENGINES = ("local", "ray")
FUNCTION = "bankproof.verifier.triton.jobs._job_entry"  # a Ray task compiles and scans
COMPILE = "bankproof.verifier.triton.jobs._job"  # a local worker compiles


def lost(job: tuple, why: str) -> CorpusEntry:
    """The entry of a job that did not come back (past its time limit, or its worker died)."""
    return CorpusEntry(config=job[0]["name"], arch=job[1], error=f"compile {why}")


def of_job(art: Artifact | None, job: tuple, key: str, refused: list[str]) -> CorpusEntry | None:
    """The entry derived again from a stored compile, where it is the job's own: one naming another
    configuration or arch is refused (and named), like one that fails its authentication.

    >>> got = []
    >>> of_job(Artifact(config="b", arch="sm90", error="x"), ({"name": "a"}, "sm90"), "ab" * 32, got), got
    (None, ["abababababab: names b@sm90, not this job's a@sm90"])
    """
    if art is None:
        return None
    if (art.config, art.arch) != (job[0]["name"], job[1]):
        refused.append(f"{key[:12]}: names {art.config}@{art.arch}, not this job's {job[0]['name']}@{job[1]}")
        return None
    from bankproof.verifier.triton.jobs import make_entry

    return make_entry(*art.job)


def keys(jobs: list[tuple]) -> list[str]:
    """The store key of every job (imports Triton and the kernels: Triton's own source hash)."""
    import triton
    from bankproof.verifier.triton.jobs import kernel_function

    kernel_keys: dict[tuple[str, str | None], str] = {}
    out = []
    for config, arch, kernels_file in jobs:
        where = (config["kernel"], kernels_file)
        if where not in kernel_keys:
            try:
                kernel_keys[where] = kernel_function(*where).cache_key
            except (InputError, AttributeError, SyntaxError, ImportError) as e:
                kernel_keys[where] = f"unreadable: {type(e).__name__}"
        out.append(job_key(config, arch, kernel_keys[where], triton.__version__))
    return out


def run(jobs: list[tuple], *, engine: str, address: str | None, workers: int, limit_s: float,
        progress: Callable[[int, int], None] | None = None, results_dir: str | None = None,
        stats: list | None = None, refused: list | None = None) -> list[CorpusEntry]:  # fmt: skip
    """Every job's entry, in job order: read from ``results_dir`` where stored, else computed by
    ``engine`` (and stored as it arrives). ``progress(done, total)`` counts the computed ones;
    ``stats`` (a list) receives the Ray workers' per-task facts (cache slot, peak memory);
    ``refused`` the stored entries the store did not trust (computed again)."""
    if engine not in ENGINES:
        raise InputError("triton corpus", "--engine", f"must be one of {', '.join(ENGINES)}", engine)
    entries: list[CorpusEntry | None] = [None] * len(jobs)
    store = ResultStore(results_dir) if results_dir else None
    key_of = keys(jobs) if store and jobs else []
    if store:
        for i, k in enumerate(key_of):
            entries[i] = of_job(store.load(k), jobs[i], k, store.refused)
        if refused is not None:
            refused.extend(store.refused)
    todo = [i for i, e in enumerate(entries) if e is None]

    def arrived(j: int, result: tuple | CorpusEntry) -> None:
        """A job's (compile, entry), or the entry of one that was lost (not stored)."""
        if isinstance(result, CorpusEntry):
            entries[todo[j]] = result
            return
        job, entry = result
        entries[todo[j]] = entry
        if store:
            store.save(key_of[todo[j]], Artifact.of_job(job))

    work = [jobs[i] for i in todo]
    if engine == "local":  # workers compile; this process scans (as the corpus always has)
        import os

        from bankproof.verifier.triton.jobs import make_entry

        def compiled(j: int, result: tuple | CorpusEntry) -> None:
            arrived(j, result if isinstance(result, CorpusEntry) else (result, make_entry(*result)))

        n = workers or max(1, min(len(work), os.cpu_count() or 1))
        run_jobs(work, COMPILE, n, limit_s, on_lost=lost, progress=progress, on_result=compiled)
    else:
        from bankproof.verifier.triton import ray_engine

        ray_engine.run(work, FUNCTION, address=address, limit_s=limit_s, on_lost=lost, on_result=arrived,
                       progress=progress, stats=stats)  # fmt: skip
    if store and refused is not None:
        refused.extend(r for r in store.refused if r not in refused)
    return [e if e is not None else lost(jobs[i], "was not run") for i, e in enumerate(entries)]


__all__ = ["ENGINES", "run"]
