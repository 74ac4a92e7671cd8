"""``bankproof convert``: the warp-shuffle plan and the shared-memory round trip, proved."""

from __future__ import annotations

from collections.abc import Sequence

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.verifier.api.problem import (
    Access,
    LayoutLike,
    MemoryLike,
    SpecLike,
    problem,
    require_modeled,
    timeout_arg,
)
from bankproof.verifier.engine import conversion
from bankproof.verifier.results import (
    ConvertResult,
)


def convert(
    source: LayoutLike | None = None,
    destination: LayoutLike | None = None,
    *,
    memory: MemoryLike | None = None,
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = DEFAULT_ARCH,
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    timeout: float = 10.0,
) -> ConvertResult:
    """Convert ``source`` into ``destination``: the warp-shuffle plan and the round trip through
    shared memory (``memory``, else the synthesized layout), each proved by Z3.

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
    ...         "warpsPerCTA = [1, 1], order = [0, 1]}>")
    >>> convert(rows, cols, shape=(32, 32), dtype="f32").verdict
    'proved'
    """
    seconds = timeout_arg(timeout, "convert")
    if spec is None and (source is None or destination is None):
        raise InputError("convert", "source/destination", "must both be given (or spec=...)")
    accesses = (
        ()
        if spec is not None
        else (Access("store", source, "source"), Access("load", destination, "destination"))
    )
    p = problem(memory, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims, spec=spec,
                require_memory=False)  # fmt: skip
    require_modeled(p, "convert")
    return conversion.convert(p, seconds)


__all__ = ["convert"]
