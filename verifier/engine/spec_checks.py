"""What the bank model needs of a spec's layouts, refused with the field named: shared memory per
CTA (no block bases), a 32-lane warp, and a store that writes every element of the tensor.

>>> from bankproof.models.layout import LinearLayout
>>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]]}, {"dim0": 32})
>>> check_access_layout(lay, "store", "access", ["i"]) == lay
True
"""

from __future__ import annotations

from bankproof.models import f2, target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.space import Space


def _per_cta(lin: LinearLayout, where: str) -> LinearLayout:
    """``lin`` without its block bases when they are all zero (every CTA holds the whole tensor,
    so one CTA's answer is every CTA's); refused naming the block dimension otherwise."""
    if "block" not in lin.in_dim_names or not lin.in_bases("block"):
        return lin
    if any(any(b) for b in lin.in_bases("block")):
        raise InputError(
            where,
            "block",
            "bases are given (a multi-CTA layout): shared memory is per CTA; check one CTA's layout "
            "(its per-CTA shape, without CGALayout or block bases)",
        )
    return lin.with_in_bases("block", [])


def check_memory_layout(
    memory: LinearLayout | PaddedLayout | None, where: str
) -> LinearLayout | PaddedLayout | None:
    """Shared memory is per CTA: a memory layout that splits the tensor over CTAs (nonzero block
    bases: ``CGALayout``, ``block = ...``) is refused naming the block dimension, rather than
    answered for a tensor no CTA holds; broadcast (zero) block bases are dropped.

    >>> lay = LinearLayout.from_bases({"offset": [[1]], "block": [[2]]}, {"dim0": 4})
    >>> try:
    ...     check_memory_layout(lay, "memory")
    ... except InputError as e:
    ...     print(e.field, e.problem[:60])
    block bases are given (a multi-CTA layout): shared memory is per C
    """
    if memory is None or isinstance(memory, PaddedLayout):
        if isinstance(memory, PaddedLayout):
            _per_cta(memory.linear, where)
        return memory
    return _per_cta(memory, where)


def check_access_layout(
    layout: LinearLayout, kind: str, where: str, dims: list[str], arch: str = DEFAULT_ARCH
) -> LinearLayout:
    """What the bank model needs of an access's layout, refused with the field named: a warp of
    32 lanes; one CTA (block bases, i.e. multi-CTA layouts, are not modeled); and, for a store,
    every tensor element written (a layout that never reaches a tensor bit leaves elements
    unwritten, so its store proves nothing about them).

    >>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [8]]}, {"dim0": 32})
    >>> try:
    ...     check_access_layout(lay, "store", "access", ["i"])
    ... except InputError as e:
    ...     print(e.problem)
    never writes tensor bit(s) i4: the store does not cover the tensor (lane 4 repeats ...)
    """
    lanes = 1 << len(layout.in_bases("lane")) if "lane" in layout.in_dim_names else 1
    want = target.get(arch).warp
    if lanes != want:
        raise InputError(where, "", f"has a {lanes}-lane warp; {arch} warps have {want} lanes")
    layout = _per_cta(layout, where)
    if kind == "store":
        space = Space.of(layout, dims)
        images = [space.pack_row_major(b) for d in layout.in_dim_names for b in layout.in_bases(d)]
        missing = [space.names[k] for k in range(space.bits) if not f2.in_span(1 << k, images)]
        if missing:
            redundant = _redundant_bases(layout, space)
            raise InputError(
                where,
                "layout",
                f"never writes tensor bit(s) {', '.join(missing)}: the store does not cover the tensor"
                + (f" ({redundant} repeats another basis or is zero)" if redundant else ""),
            )
    return layout


def _redundant_bases(layout: LinearLayout, space: Space) -> str:
    """The first input basis that adds nothing to the span of those before it."""
    seen: list[int] = []
    for d in layout.in_dim_names:
        for i, b in enumerate(layout.in_bases(d)):
            v = space.pack_row_major(b)
            if f2.in_span(v, seen) and d != "register":
                return f"{d} {i}"
            seen.append(v)
    return ""
