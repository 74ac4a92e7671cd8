"""``verify_many``: the wavefronts of the same accesses on many memory layouts at once, the counts
``verify`` gives with the enumeration engine, computed from the bases. For a linear memory layout
the byte address of every (register, lane, warp) is the XOR of its input bits' images under the
memory layout's inverse, so each layout costs one elimination and a few vectorized XORs, and the
hardware model counts every layout's instructions in one batch per instruction width. A layout the
fast path does not cover (padded memory, a named instruction, a lane-group target, CTA blocks)
goes through ``verify`` itself, so every answer is the same.

>>> rows = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
...         "order = [1, 0]}>")
>>> mems = ["32*m + n", "32*m + (n ^ (8*(m % 4)))"]
>>> r = verify_many(mems, load=rows, shape=(8, 32), dtype="f16")
>>> [[a.wavefronts for a in layout] for layout in r.layouts]
[[4], [4]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.api.problem import Access, LayoutLike, MemoryLike, problem, read_memory
from bankproof.verifier.engine import batch, check
from bankproof.verifier.results import Result

MAX_LAYOUTS = 1_000_000


@dataclass(frozen=True)
class AccessCount(Result):
    """One access on one layout: its instruction, warp instructions, wavefronts and the ideal."""

    name: str
    instr: str
    instructions: int
    wavefronts: int
    ideal: int


@dataclass(frozen=True)
class ManyResult(Result):
    """Per memory layout, in the order given, its accesses' counts."""

    layouts: tuple[tuple[AccessCount, ...], ...]


def verify_many(
    memories: Sequence[MemoryLike],
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
) -> ManyResult:
    """The accesses' counts on each of ``memories`` (any form ``verify`` takes)."""
    if isinstance(memories, (str, bytes)) or not isinstance(memories, Sequence) or not memories:
        raise InputError(
            "verify_many", "memories", "must be a non-empty list of memory layouts", type(memories)
        )
    if len(memories) > MAX_LAYOUTS:
        raise InputError("verify_many", "memories", f"lists at most {MAX_LAYOUTS} layouts", len(memories))
    p = problem(memories[0], store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch,
                dims=dims, units=units, base_align=base_align)  # fmt: skip
    size, names = [s for _, s in p.memory.out_dims] if isinstance(p.memory, LinearLayout) else None, p.dims
    layouts = []
    for i, m in enumerate(memories):
        try:
            lay = p.memory if i == 0 else read_memory(m, list(p.shape), p.dtype, names, units, base_align)[0]
        except InputError as e:
            raise InputError("verify_many", f"memories[{i}]", str(e)) from None
        layouts.append(lay)
    fast = {i: tuple(AccessCount(*row) for row in rows) for i, rows in batch.counts(p, layouts, size).items()}
    out = []
    for i, lay in enumerate(layouts):
        got = fast.get(i)
        if got is None:  # the general path: verify itself, enumeration only
            try:
                r = check.verify(replace(p, memory=lay), ("enumeration",), 10.0)
            except InputError as e:
                raise InputError("verify_many", f"memories[{i}]", str(e)) from None
            got = tuple(
                AccessCount(a.name, a.instr, a.instructions, a.wavefronts, a.ideal) for a in r.accesses
            )
        out.append(got)
    return ManyResult(tuple(out))


__all__ = ["verify_many", "ManyResult", "AccessCount"]
