"""``bankproof verify``: wavefronts of every access, decided by enumeration, Lemma 9.4 and Z3."""

from __future__ import annotations

from collections.abc import Sequence

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.verifier.api.problem import (
    Access,
    LayoutLike,
    MemoryLike,
    SpecLike,
    engines_arg,
    problem,
    timeout_arg,
)
from bankproof.verifier.engine import check, scope
from bankproof.verifier.results import PageData, VerifyResult


def verify(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = DEFAULT_ARCH,
    dims: Sequence[str] | None = None,
    units: str = "element",
    base_align: int = 0,
    spec: SpecLike | None = None,
    engines: str | Sequence[str] = "all",
    timeout: float = 10.0,
) -> VerifyResult:
    """Wavefronts of every access, decided by enumeration, Lemma 9.4 and Z3 (``bankproof verify``).
    An access naming a CuTe atom bankproof cannot translate is listed in ``unread`` with why, the
    others answered, and the verdict is ``unknown`` unless another access is refuted.

    >>> verify(spec={"shape": [32], "dtype": "f32", "memory": {"formula": "i"}, "access": [{"kind": "store",
    ...     "layout": {"bases": {"lane": [[1], [2], [4], [8], [16]]}}}]}).verdict
    'proved'
    """
    chosen, seconds = engines_arg(engines, "verify"), timeout_arg(timeout, "verify")
    p = problem(memory, store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch,
                dims=dims, units=units, base_align=base_align, spec=spec, partial=True)  # fmt: skip
    return check.verify(p, chosen, seconds)


def page_data(spec: SpecLike, result: VerifyResult) -> PageData:
    """What ``verify --html`` draws of ``spec`` beyond its ``result``: each access's bank scope and
    matrix, the memory's matrix, the §5.4 explanation."""
    return scope.page_data(problem(spec=spec, partial=True), result)


__all__ = ["page_data", "verify"]
