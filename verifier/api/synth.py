"""``bankproof synth``: the optimal memory layout for a writer and a reader, with its proofs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.layout import MAX_TABLE_BITS
from bankproof.verifier.api.problem import (
    Access,
    LayoutLike,
    SpecLike,
    engines_arg,
    problem,
    require_modeled,
    timeout_arg,
)
from bankproof.verifier.engine import synthesis
from bankproof.verifier.engine.constrained import constrained, read_weights
from bankproof.verifier.results import (
    SynthResult,
)


def synth(
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = DEFAULT_ARCH,
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    engines: str | Sequence[str] = "all",
    timeout: float = 10.0,
    weights: Mapping[str, float] | None = None,
    padded: bool = False,
) -> SynthResult:
    """The optimal memory layout for the writer (first store) and reader (first load), in every
    notation, verified, with Z3's proof that no linear layout is cheaper (``bankproof synth``);
    where the spec lists the other engines that touch the buffer (``[[engine]]``: TMA boxes,
    descriptor reads), also the cheapest layout all of them can take (``constrained``), the Pareto
    front of those layouts over wavefronts, instructions, engine operations, XOR and padding terms
    and shared bytes, and with ``weights`` (per cost) the front's pick; ``padded`` (no engines):
    the same front over the synthesized layout and plain and padded ones.

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
    ...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
    >>> r = synth(store=rows, load=cols, shape=(16, 32), dtype="f32", engines="enum")
    >>> [(a.instr, a.instructions, a.wavefronts) for a in r.accesses], r.verdict
    ([('st128', 4, 16), ('ld32', 16, 16)], 'proved')
    """
    chosen, seconds = engines_arg(engines, "synth"), timeout_arg(timeout, "synth")
    weighed = read_weights(weights)
    p = problem(store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims,
                spec=spec, require_memory=False)  # fmt: skip
    require_modeled(p, "synth")
    if not isinstance(padded, bool):
        raise InputError("synth", "padded", "must be True or False", padded)
    elements = math.prod(p.shape)
    if (padded or p.engines) and elements > 1 << MAX_TABLE_BITS:  # checked before anything is built
        flag = "padded" if padded else "engine"
        why = f"weighs layouts element by element: the tile has {elements} elements, over 2^{MAX_TABLE_BITS}"
        raise InputError("synth", flag, why, "x".join(map(str, p.shape)))
    result = synthesis.synth(p, chosen, seconds)
    if padded and p.engines:
        raise InputError("synth", "padded", "weighs layouts no engine takes: the spec's [[engine]] take none")
    if not p.engines and not padded:
        if weighed is not None:
            why = "pick among the layouts [[engine]] tables or padded allow: the spec has none"
            raise InputError("synth", "weights", why)
        return result
    return replace(result, constrained=constrained(p, result, chosen, seconds, weighed, padded))


__all__ = ["synth"]
