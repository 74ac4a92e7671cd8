"""``bankproof explain``: the §5.4 construction's sets, bits named after the dims."""

from __future__ import annotations

from collections.abc import Sequence

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.verifier.api.problem import (
    Access,
    LayoutLike,
    SpecLike,
    problem,
    require_modeled,
)
from bankproof.verifier.engine import synthesis
from bankproof.verifier.results import (
    ExplainResult,
)


def explain(
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = DEFAULT_ARCH,
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
) -> ExplainResult:
    """The §5.4 construction's sets for the writer and reader, bits named after the dims
    (``bankproof explain``; ``bankproof.render.explain_text`` narrates it).

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
    ...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
    >>> r = explain(store=rows, load=cols, shape=(16, 32), dtype="f32")
    >>> r.sets["H"], r.formula
    (('n1⊕m0', 'n2⊕m1', 'n3⊕m2', 'n4⊕m3'), '32*m + (n ^ (2*m))')
    """
    p = problem(store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims,
                spec=spec, require_memory=False)  # fmt: skip
    require_modeled(p, "explain")
    return synthesis.explain(p)


__all__ = ["explain"]
