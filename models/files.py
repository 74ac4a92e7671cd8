"""Reading what a user names: one place that opens files, reads at most a stated number of bytes
before anything parses them (a ``/dev/zero`` or a 10 GB log is refused after ``limit`` bytes, not
read whole), and says in one line why a file cannot be used.

>>> import tempfile, os
>>> with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
...     _ = f.write("x" * 100)
>>> read_text(f.name, 10, "spec", "file")
Traceback (most recent call last):
...
bankproof.models.errors.InputError: spec: file is larger than 10 bytes, got ...
>>> os.unlink(f.name)
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from bankproof.models.errors import InputError

# The limits, stated once (README: "Input limits").
SPEC_BYTES = 1 << 20  # a spec file (TOML)
TEXT_BYTES = 64 << 20  # a TTGIR or PTX file
LINES_BYTES = 256 << 20  # the JSON lines of `bankproof wavefronts`
BASELINE_BYTES = 64 << 20  # a corpus baseline (JSON)


def read_stream(stream: BinaryIO, limit: int, where: str, field: str) -> str:
    """At most ``limit`` bytes of ``stream`` (binary, or text: then characters) as UTF-8 text
    (more is refused); a closed standard input (``None``) or a read error is an :class:`InputError`."""
    if stream is None:
        raise InputError(where, field, "is standard input, which is closed")
    try:
        raw = stream.read(limit + 1)
    except (OSError, ValueError) as e:  # a closed or unreadable stream
        raise InputError(where, field, f"cannot be read ({type(e).__name__})") from None
    if len(raw) > limit:
        raise InputError(where, field, f"is larger than {limit} bytes", f"more than {limit}")
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(where, field, f"is not UTF-8 text (byte {e.start})") from None


_INPUTS: set[tuple[int, int]] = set()  # (device, inode) of every file this process read as input


def begin_run() -> None:
    """Forget the inputs of an earlier run in this process (each command line is one run)."""
    _INPUTS.clear()


def note_input(path: str | os.PathLike) -> None:
    """Remember ``path`` as an input of this run: no output of the run may overwrite it
    (:func:`is_input`). :func:`read_text` notes every file it reads."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    _INPUTS.add((st.st_dev, st.st_ino))


def is_input(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file this run read (followed through links: a link to an input is it).

    >>> import tempfile
    >>> begin_run()  # a new run: what earlier ones read (and deleted: inodes are reused) is forgotten
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
    ...     before = is_input(f.name); _ = read_text(f.name, 10, "x", "y"); after = is_input(f.name)
    >>> before, after
    (False, True)
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return (st.st_dev, st.st_ino) in _INPUTS


def read_text(path: str | os.PathLike, limit: int, where: str, field: str) -> str:
    """The text of the file at ``path``, read up to ``limit`` bytes: a folder, a FIFO, a device or
    anything else that is not a regular file (opening a FIFO would wait for a writer), a missing or
    unreadable file, a larger one or one that is not UTF-8 is an :class:`InputError`."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(where, field, "is a folder, not a file", str(path))
        if not stat.S_ISREG(mode):
            raise InputError(where, field, "is not a regular file (a FIFO, a device or a socket)", str(path))
        note_input(p)
        with open(p, "rb") as fh:
            return read_stream(fh, limit, where, field)
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise InputError(where, field, f"cannot be read ({why})", str(path)) from None


_NEEDS_HOOKS = re.compile(r"\d{21}|NaN|Infinity")  # what the hooks refuse can only be where these are
_NEEDS_HOOKS_BYTES = re.compile(rb"\d{21}|NaN|Infinity|\x00")  # (UTF-16/32 JSON: the hooked parse)


class _Refused(ValueError):
    pass


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > 20:  # beyond 64 bits: no field takes it, and int() of 5000 digits raises
        raise _Refused(f"an integer of {len(digits)} digits")
    return int(digits)


def _constant(name: str) -> float:
    raise _Refused(f"{name} (not a JSON number)")


def json_value(text: str | bytes, where: str, field: str) -> object:
    """A JSON value a user gave as text: integers beyond 64 bits, NaN and Infinity, nesting
    deeper than the parser takes and text that is not JSON are each one :class:`InputError`.

    >>> json_value('{"a": [1, 2]}', "x", "y")
    {'a': [1, 2]}
    >>> json_value("[" + "9" * 30 + "]", "bases", "text")
    Traceback (most recent call last):
    ...
    bankproof.models.errors.InputError: bases: text has an integer of 30 digits
    """
    try:
        hooks = (_NEEDS_HOOKS_BYTES if isinstance(text, bytes) else _NEEDS_HOOKS).search(text)
        if hooks is None:  # no long digit run, no NaN/Infinity: the C parser alone
            return json.loads(text)
        return json.loads(text, parse_int=_int, parse_constant=_constant)
    except _Refused as e:
        raise InputError(where, field, f"has {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(where, field, f"is not valid JSON ({e.msg} at column {e.colno})") from None
    except (RecursionError, ValueError, UnicodeDecodeError):
        raise InputError(where, field, "is not JSON this reads (nested too deeply or not UTF-8)") from None
