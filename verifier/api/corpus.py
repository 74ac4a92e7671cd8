"""``bankproof triton corpus``: compile a corpus of Triton kernels (the built-in one, or the user's
kernels file), analyse each compile once with the wing's pipeline, compare with a baseline.

>>> callable(corpus) and callable(baseline_accesses)
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bankproof.verifier.triton import corpus as wing
from bankproof.verifier.triton.results import CorpusResult


def corpus(
    archs: list[str],
    kernels_file: str | None = None,
    baseline: str | None = None,
    workers: int = 0,
    compare_baseline: bool = True,
    limit_s: float = wing.COMPILE_LIMIT_S,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    address: str | None = None,
    results_dir: str | None = None,
    expand: int = 0,
    seed: int = 0,
) -> CorpusResult:
    """Every (configuration, arch) compiled, scanned, its ledger and descriptors checked, and
    compared with ``baseline`` (see ``bankproof triton corpus --help``)."""
    return wing.check_corpus(
        archs, kernels_file, baseline, workers, compare_baseline=compare_baseline, limit_s=limit_s,
        progress=progress, engine=engine, address=address, results_dir=results_dir, expand=expand, seed=seed,
    )  # fmt: skip


def baseline_accesses(result: CorpusResult) -> Mapping[str, int]:
    """The run's accesses as a baseline file lists them."""
    return wing.flat_accesses(list(result.entries))


def updated_baseline(path: str, result: CorpusResult) -> tuple[dict[str, int], int]:
    """The baseline file at ``path`` updated by this run: the entries of every compile this run
    made replaced by its accesses now, every other entry (other kernels, other archs, compiles
    that failed this time) kept as it was; and how many were kept. A file that is not a baseline
    is refused (an ``InputError``), never overwritten."""
    import os

    old = wing.load_baseline(path) if os.path.exists(path) else {}
    made = {e.name for e in result.entries if e.compiled}
    kept = {k: v for k, v in old.items() if k.split(" ", 1)[0] not in made}
    return {**kept, **baseline_accesses(result)}, len(kept)


__all__ = ["corpus", "baseline_accesses", "updated_baseline"]
