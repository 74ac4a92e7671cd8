"""CuTe's nested shapes and strides as plain values: sizes, leaves, congruence, compact strides,
a layout at 1-D indices, and the printed forms (``(8,(4,2))``, ``_8``, ``Shape<...>``, ``make_shape``).

>>> size((8, (4, 2))), leaves((8, (4, 2))), fmt((8, (4, 2)), "cpp")
(64, [8, 4, 2], '(_8,(_4,_2))')
"""

from __future__ import annotations

Nested = int | tuple  # an int or a tuple of Nested


def compact(shape: Nested, right: bool) -> Nested:
    """Compact strides: first mode fastest (``LayoutLeft``) or last (``LayoutRight``, per level).

    >>> compact((8, (4, 2)), right=True), compact((8, (4, 2)), right=False)
    ((8, (2, 1)), (1, (8, 32)))
    """
    if not isinstance(shape, tuple):
        return 1
    out: list = [None] * len(shape)
    acc = 1
    order = range(len(shape) - 1, -1, -1) if right else range(len(shape))
    for i in order:
        out[i] = _scaled(compact(shape[i], right), acc)
        acc *= size(shape[i])
    return tuple(out)


def _scaled(x: Nested, k: int) -> Nested:
    return tuple(_scaled(y, k) for y in x) if isinstance(x, tuple) else x * k


def evaluate(shape: Nested, stride: Nested, index):
    """A CuTe layout at 1-D indices (an int or an array), the coordinate split first mode fastest.

    >>> evaluate((4, 2), (2, 1), 5)
    3
    """
    out = index * 0
    for s, d in zip(leaves(shape), leaves(stride)):
        out += (index % s) * d
        index = index // s
    return out


def congruent(a: Nested, b: Nested) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not isinstance(b, tuple)


def leaves(x: Nested) -> list[int]:
    return [y for z in x for y in leaves(z)] if isinstance(x, tuple) else [x]


def size(x: Nested) -> int:
    out = 1
    for v in leaves(x):
        out *= v
    return out


def fmt(x: Nested, style: str = "plain") -> str:
    """A nested tuple printed: ``(8,(4,2))``; ``cpp`` writes ``_8``; ``type`` writes
    ``Shape<_8,Shape<_4,_2>>`` (``kind`` below); ``make`` writes ``make_shape(Int<8>{}, ...)``."""
    if isinstance(x, tuple):
        return "(" + ",".join(fmt(y, style) for y in x) + ")"
    return f"_{x}" if style == "cpp" and x >= 0 else str(x)


def fmt_type(x: Nested, kind: str) -> str:
    """``Shape<_8,Shape<_4,_2>>`` (or ``Stride<...>``)."""
    if isinstance(x, tuple):
        return f"{kind}<" + ",".join(fmt_type(y, kind) for y in x) + ">"
    return f"_{x}" if x >= 0 else f"Int<{x}>"


def fmt_make(x: Nested, fn: str) -> str:
    """``make_shape(Int<8>{}, make_shape(Int<4>{}, Int<2>{}))``."""
    if isinstance(x, tuple):
        return f"{fn}(" + ", ".join(fmt_make(y, fn) for y in x) + ")"
    return f"Int<{x}>{{}}"
