"""``bankproof show``: the bank scope of one instruction."""

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
    arch: str = DEFAULT_ARCH,
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
    require_modeled(p, "show")
    if access is not None and not isinstance(access, str):
        raise InputError("show", "access", "must be an access's name", access)
    if instruction is not None and (isinstance(instruction, bool) or not isinstance(instruction, int)):
        raise InputError("show", "instruction", "must be an integer", instruction)
    return scope.show(p, access, instruction)


__all__ = ["show"]
