"""The one error type for bad input: it names where the problem is and what was given.

>>> str(InputError("swizzled_shared", "maxPhase", "must be a power of two", 6))
'swizzled_shared: maxPhase must be a power of two, got 6'
"""

from __future__ import annotations

_MISSING = object()


class InputError(ValueError):
    """A user-facing input problem: ``<where>: <field> <problem>, got <value>``."""

    def __init__(self, where: str, field: str, problem: str, value: object = _MISSING):
        self.where = where
        self.field = field
        self.problem = problem
        self.value = value
        text = f"{where}: {field} {problem}" if field else f"{where}: {problem}"
        if value is not _MISSING:
            text += f", got {value}"
        super().__init__(text)


def is_pow2(x: object) -> bool:
    """Whether x is a positive power of two (bools are not numbers here).

    >>> [is_pow2(v) for v in (1, 6, 0, 8)]
    [True, False, False, True]
    """
    return isinstance(x, int) and not isinstance(x, bool) and x > 0 and (x & (x - 1)) == 0


def log2(x: int) -> int:
    """Exact log2 of a power of two.

    >>> log2(32)
    5
    """
    assert is_pow2(x), x
    return x.bit_length() - 1
