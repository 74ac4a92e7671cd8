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


__all__ = ["corpus", "baseline_accesses"]
