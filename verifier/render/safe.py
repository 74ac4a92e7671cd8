r"""Output that cannot be driven by what a user typed: markup escaping that also writes control
characters and bidi overrides as visible escapes (an SVG stays well-formed XML: XML 1.0 has no
way to write ESC or NUL at all), and a terminal stream that lets through only the renderers' own
colour codes: a renderer writes one with :func:`colour` (a mark keyed per process, which no text a
user gives can spell), and every escape character in the text itself, a colour code included, is
written as a visible escape.

>>> escape("lane<0>\x1b]0;t\x07 \u202e")
'lane&lt;0&gt;\\x1b]0;t\\x07 \\u202e'
>>> import io
>>> s = io.StringIO(); _ = SafeStream(s).write(colour("1;32") + "ok" + colour("0") + " \x1b[31m\n")
>>> s.getvalue()
'\x1b[1;32mok\x1b[0m \\x1b[31m\n'
"""

from __future__ import annotations

import html
import re
import secrets
from typing import TextIO

from bankproof.models.errors import printable

_KEY = "\ue000" + secrets.token_hex(8)  # the renderers' colour mark: private to this process
_MARK = re.compile(
    re.escape(_KEY) + r"(\[[0-9;]{0,12}m)"
)  # a renderer's colour code, the only one let through


def colour(code: str) -> str:
    """A renderer's colour code (``colour("41;97")``): a terminal stream writes it as the escape
    sequence ``ESC [41;97m``; nothing a user gives can produce one."""
    return f"{_KEY}[{code}m"


def escape(value: object, quote: bool = True) -> str:
    """``html.escape`` of ``value``'s printable form (see :func:`bankproof.models.errors.printable`),
    lines and tabs kept (a ``<pre>`` block's text)."""
    return html.escape(_lines(str(value)), quote)


def _lines(text: str) -> str:
    """:func:`printable` of ``text`` with its newlines and tabs kept."""
    return "\n".join("\t".join(map(printable, line.split("\t"))) for line in text.split("\n"))


def uncoloured(text: str) -> str:
    """``text`` without the renderers' colour codes (for a page)."""
    return _MARK.sub("", text)


def terminal(text: str) -> str:
    """``text`` for a terminal: lines and tabs kept, colour codes kept, every other control
    character escaped; a carriage return only as the first character (a progress bar's)."""
    head = "\r" if text.startswith("\r") else ""
    parts = _MARK.split(text[len(head) :])
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append("\x1b" + part)
        else:
            out.append(_lines(part))
    return head + "".join(out)


class SafeStream:
    """A text stream whose writes go through :func:`terminal` (everything else is the stream's)."""

    def __init__(self, stream: TextIO | None):
        self._stream = stream  # None: the process was started with this stream closed

    def write(self, text: str) -> int:
        safe = terminal(text)
        if self._stream is None:
            raise BrokenPipeError("the stream is closed")
        try:
            self._stream.write(safe)
        except UnicodeEncodeError:  # a terminal that cannot print ⊕: write it as an escape
            enc = getattr(self._stream, "encoding", None) or "ascii"
            self._stream.write(safe.encode(enc, "backslashreplace").decode(enc))
        except ValueError as e:  # the stream was closed under us: as a closed pipe
            raise BrokenPipeError(str(e)) from None
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
