"""The fuzzers' shared parts: mutations of valid inputs (deep nesting, huge and negative numbers,
wrong types, control characters, truncation) and the one check every entry point must pass.

A case passes when the call returns a result whose text is terminal-safe, or raises the
user-facing :class:`~bankproof.models.errors.InputError` with a bounded, escaped message naming
where and what; anything else (another exception type, a traceback, a case past its time limit)
fails the test with the input that caused it.

>>> import random
>>> mutate("(8,8):(1,8)", random.Random(0), 2) != "(8,8):(1,8)"
True
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import reprlib
import signal

from bankproof.models.errors import InputError

# fixed-seed cases per entry point in `make test`; BANKPROOF_FUZZ_SCALE=20 for the long run
SCALE = float(os.environ.get("BANKPROOF_FUZZ_SCALE", "1"))
CASE_LIMIT_S = 20  # a case past it has hung
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
PIECES = [
    "(", ")", "[", "]", "{", "}", "<", ">", ",", ":", "=", " ", "\n", '"', "'", "#", "-", "x", "o", "_",
    "0", "1", "-1", "3", "7", "64", "1024", "4294967296", "9223372036854775808", "9" * 40, "1" + "0" * 5000,
    "\x1b]0;t\x07", "\x00", "\u202e", "\x1b[2J", "\ud7ff", "é", "⊕", "nan", "inf", "true", "null",
    "#ttg.blocked<{", "#ttg.slice<{dim = 0, parent = ", "Sw<", "make_layout(", "composition(", "Int<",
]  # fmt: skip
NUMBER = re.compile(r"-?\d+")
BIG = ["0", "-1", "-8", "3", "1" + "0" * 30, "9223372036854775807", "18446744073709551616", "1" + "0" * 5000]


def mutate(text: str, rng: random.Random, n: int) -> str:
    """``text`` after ``n`` random edits: insert, delete, repeat a span (nesting), replace a number
    by an extreme one, or cut the text short."""
    for _ in range(n):
        op = rng.randrange(6)
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randrange(1, 40))
        if op == 0:
            text = text[:i] + rng.choice(PIECES) + text[i:]
        elif op == 1:
            text = text[:i] + text[j:]
        elif op == 2 and j > i:
            text = text[:i] + text[i:j] * rng.choice([2, 3, 50, 500]) + text[j:]
        elif op == 3 and NUMBER.search(text):
            nums = list(NUMBER.finditer(text))
            m = rng.choice(nums)
            text = text[: m.start()] + rng.choice(BIG) + text[m.end() :]
        elif op == 4:
            text = text[:i]
        else:
            text = text[:i] + chr(rng.choice([0, 7, 27, 127, 0x202E, 0xFFFE, 0x10FFFF])) + text[i:]
    return text


WEIRD = [
    None,
    True,
    -1,
    0,
    2**63,
    2**5000,
    1.5,
    float("nan"),
    "",
    "x" * 100_000,
    "\x1b[2J",
    [],
    {},
    [[[[[]]]]],
]


def mutate_value(value: object, rng: random.Random, depth: int = 0) -> object:
    """A JSON-like value with one part replaced by a wrong or extreme one (types, sizes, nesting)."""
    if depth < 4 and isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        return {**value, key: mutate_value(value[key], rng, depth + 1)}
    if depth < 4 and isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        return value[:i] + [mutate_value(value[i], rng, depth + 1)] + value[i + 1 :]
    if isinstance(value, str) and rng.random() < 0.6:
        return mutate(value, rng, rng.randint(1, 3))
    choice = rng.randrange(len(WEIRD) + 1)
    if choice == len(WEIRD):  # deep nesting
        out: object = value
        for _ in range(rng.choice([50, 2000])):
            out = [out]
        return out
    return WEIRD[choice]


_SHOW = reprlib.Repr()
_SHOW.maxstring = _SHOW.maxother = 300
_SHOW.maxlevel = 6


def show(case: object) -> str:
    """A short repr of a case (cases nest thousands deep)."""
    return _SHOW.repr(case)


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"a fuzz case ran past {CASE_LIMIT_S} s")


def check(call, case: object) -> str:
    """Run ``call()`` on one case; ``ok`` or ``refused``, else an AssertionError naming the case."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_LIMIT_S)
    try:
        result = call()
    except InputError as e:
        message = str(e)
        assert re.match(r"^[^:\n]{1,200}: ", message), (
            f"message names no place: {message[:200]!r} for {show(case)}"
        )
        assert len(message) < 4000 and not RAW.search(message), f"unbounded or raw message for {show(case)}"
        return "refused"
    except RecursionError as e:  # a RecursionError is a crash like any other: say which input
        raise AssertionError(f"RecursionError for {show(case)}") from e
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    with contextlib.suppress(AttributeError):
        text = result.to_text()
        assert not RAW.search(text), f"raw control characters in the text of {show(case)}"
        json.loads(result.to_json())
    return "ok"


def count(n: int) -> int:
    """Cases for one entry point at this run's scale."""
    return max(1, int(n * SCALE))
