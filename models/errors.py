r"""The one error type for bad input: it names where the problem is and what was given, the
value quoted as a bounded, printable excerpt (never a user object's own ``str``, which may raise,
hang or be megabytes long; control characters and bidi overrides escaped).

>>> str(InputError("swizzled_shared", "maxPhase", "must be a power of two", 6))
'swizzled_shared: maxPhase must be a power of two, got 6'
>>> print(InputError("layout", "name", "is bad", "a\x1b]0;x\x07b"))
layout: name is bad, got a\x1b]0;x\x07b
"""

from __future__ import annotations

import reprlib

_MISSING = object()
MAX_QUOTE = 120  # characters of a user value a message quotes
MAX_PROBLEM = 800  # characters of the problem's own words (which may quote the input)
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = MAX_QUOTE
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 12
_REPR.maxlevel = 4


def printable(text: str) -> str:
    r"""``text`` with every control character, bidi override and other invisible format character
    written as an escape (``\x1b``, ``\u202e``), so it cannot drive a terminal or reorder a line.

    >>> print(printable("ok\u202eevil\x00"))
    ok\u202eevil\x00
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def excerpt(value: object, limit: int = MAX_QUOTE) -> str:
    """A user value as a message quotes it: strings as they are (escaped, cut at ``limit``),
    numbers and containers of plain values through a bounded repr, any other object by its type
    only (its ``__str__`` is never called).

    >>> excerpt("x" * 500)[-12:], excerpt(10 ** 5000), excerpt(object())
    ('xxx... (500)', 'an integer of 5001 digits', '<object>')
    """
    if isinstance(value, str):
        text = value if len(value) <= limit else f"{value[:limit]}... ({len(value)})"
    elif isinstance(value, bool) or value is None or isinstance(value, float):
        text = str(value)
    elif isinstance(value, int):
        n = len(str(value)) if value.bit_length() < 10_000 else int(value.bit_length() * 0.30103) + 1
        text = str(value) if n <= 60 else f"an integer of {n} digits"
    elif type(value) in (list, tuple, dict, set, frozenset):
        try:
            text = _REPR.repr(value)
        except (ValueError, RecursionError):
            text = f"<{type(value).__name__}>"
    else:
        text = f"<{type(value).__name__}>"
    return printable(text[: limit + 40])


class InputError(ValueError):
    """A user-facing input problem: ``<where>: <field> <problem>, got <value>``."""

    def __init__(self, where: str, field: str, problem: str, value: object = _MISSING):
        self.where = where
        self.field = field
        self.problem = problem
        self.value = value
        place, name = excerpt(str(where)), excerpt(str(field))  # a field may be a user's key
        problem = excerpt(str(problem), MAX_PROBLEM)  # it may quote a token of the input
        text = f"{place}: {name} {problem}" if field else f"{place}: {problem}"
        if value is not _MISSING:
            text += f", got {excerpt(value)}"
        super().__init__(text)


class Untranslatable(InputError):
    """Well-formed input naming something bankproof has no translation or model for (a CuTe atom
    outside its tables, a sub-dword LDS access): ``verify`` answers the rest of a spec and names
    what it could not read; constrained synthesis counts such a layout unknown; every other command
    refuses it like any input error."""


class TimeLimit(Exception):
    """The user's time limit ran out before there was anything to answer (a compile still
    running): no verdict, so the command exits 3 (``unknown``), never 0 or 1.

    >>> str(TimeLimit("kernel: the compile did not finish within 5 s"))
    'kernel: the compile did not finish within 5 s'
    """


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
