"""``bankproof show``: the bank scope of one instruction."""

from __future__ import annotations

from collections.abc import Sequence

from bankproof.verifier.api.problem import (
    Access,
    LayoutLike,
    MemoryLike,
    SpecLike,
    _modeled,
    problem,
)
from bankproof.verifier.engine import scope
from bankproof.verifier.results import (
    ShowResult,
)


def show(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    access: str | None = None,
    instruction: int | None = None,
) -> ShowResult:
    """The bank scope of one instruction (``bankproof show``): per wavefront group, which lanes
    reach which word of which bank.

    >>> r = show("32*m + n", load="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
    ...          "warpsPerCTA = [1, 1], order = [1, 0]}>", shape=(32, 32), dtype="f32")
    >>> r.instr, sorted(r.groups[0][0].items())[:2]
    ('ld128', [(0, [0]), (32, [1])])
    """
    p = problem(memory, store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch,
                dims=dims, spec=spec)  # fmt: skip
    _modeled(p, "show")
    return scope.show(p, access, instruction)
