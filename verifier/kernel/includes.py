"""What a CUDA source may read: the preprocessor's own view of every include, and the virtual file
system the compile sees.

A source and its headers are lexed as the preprocessor lexes them (translation phases 2 and 3:
backslash-newline splices, also inside a word; comments, ``/* */`` spanning lines; string,
character and raw string literals, whose splices are reverted; pp-numbers with digit separators),
and every directive is found wherever the preprocessor would find it: after a comment, after the
``%:`` digraph, split by splices. Where the standard leaves a lexing choice open (an unterminated
``'`` or ``"``; whether a raw string reverts its splices; whether a comment spanning lines starts a
new line) every reading is taken and their directives united, so a directive any reading sees is
checked.

What the compile then sees (:class:`VirtualFiles`): the source, the user's headers it reaches
(found in the source's folder for ``"..."``, then in the folders the user names; resolved inside
the folder they were found in, never through a link out of it) handed to NVRTC in memory, and the
toolkit's folders. A name that is absolute or climbs with ``..`` is refused as "not given" in an
``#include`` and answers false in ``__has_include`` (rewritten to ``0``); the child process that
compiles cannot open anything else either (:mod:`bankproof.verifier.kernel.sandbox`).

>>> v = gather('#include "/etc/passwd"\\n', "k.cu")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bankproof.models.errors.InputError: kernel: source #include names a file that was not given ...
>>> gather('#if __has_include("/etc/passwd")\\n#endif\\n', "k.cu").source
'#if 0\\n#endif\\n'
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bankproof.models.errors import InputError

WHERE = "kernel"
MAX_HEADERS = 4096  # user headers one compile may reach
MAX_BYTES = 64 << 20  # their text together
INCLUDES = frozenset({"include", "include_next", "import", "embed"})
HAS_INCLUDE = frozenset({"__has_include", "__has_include_next", "__has_embed"})
_SPLICE = re.compile(r"\\\r?\n")
_TOKEN = re.compile(
    r"""(?P<nl>\n)
    |(?P<ws>[ \t\f\v\r]+)
    |(?P<lc>//[^\n]*)
    |(?P<bc>/\*)
    |(?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\ \t\v\f\r\n"]{0,16})\()
    |(?P<lit>(?:u8|[uUL])?(?P<q>["']))
    |(?P<num>\.?\d(?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)
    |(?P<id>[A-Za-z_$][A-Za-z0-9_$]*)
    |(?P<hash>%:|\#)
    |(?P<other>.)""",
    re.S | re.X,
)


@dataclass(frozen=True)
class Use:
    """One place a file name is used: a directive (``include``, ``include_next``, ...) or a
    ``__has_include``; ``name`` is None where it is not a literal; ``angle`` for ``<name>``;
    ``span`` in the original text."""

    kind: str
    name: str | None
    angle: bool
    span: tuple[int, int]


@dataclass(frozen=True)
class VirtualFiles:
    """What the compile sees of the user's files: the source (``__has_include`` of names outside
    rewritten to ``0``) and the user's headers by the names they are included as."""

    source: str
    headers: tuple[tuple[str, str], ...] = ()
    paths: dict[str, str] = field(default_factory=dict, compare=False)


class _Logical:
    """A text with its splices removed and the map back to the original's offsets."""

    def __init__(self, text: str) -> None:
        pieces, self.starts, self.orig = [], [], []
        at = logical = 0
        for m in _SPLICE.finditer(text):
            pieces.append(text[at : m.start()])
            self.starts.append(logical)
            self.orig.append(at)
            logical += m.start() - at
            at = m.end()
        pieces.append(text[at:])
        self.starts.append(logical)
        self.orig.append(at)
        self.text = "".join(pieces)
        self.spliced = len(pieces) > 1

    def original(self, i: int) -> int:
        k = bisect.bisect_right(self.starts, i) - 1
        return self.orig[k] + i - self.starts[k]

    def logical(self, o: int) -> int:
        k = max(0, bisect.bisect_right(self.orig, o) - 1)
        return self.starts[k] + min(o - self.orig[k], self._piece_len(k))

    def _piece_len(self, k: int) -> int:
        end = self.starts[k + 1] if k + 1 < len(self.starts) else len(self.text)
        return end - self.starts[k]


def uses(text: str) -> list[Use]:
    """Every directive that names a file and every ``__has_include`` of ``text``, as any reading
    the preprocessor may take sees them (see the module docstring).

    >>> [(u.kind, u.name) for u in uses('/* x */ %: inc\\\\\\nlude <a.h>\\n')]
    [('include', 'a.h')]
    """
    if "\x00" in text:
        raise InputError(WHERE, "source", "contains a NUL character")
    logical = _Logical(text)
    found: dict[tuple, Use] = {}
    ambiguous = _scan(logical, text, True, True, found)
    if ambiguous:
        for to_eol in (True, False):
            for revert in (True, False):
                _scan(logical, text, to_eol, revert, found)
    return sorted(found.values(), key=lambda u: u.span)


def _scan(lg: _Logical, original: str, to_eol: bool, revert: bool, found: dict) -> bool:
    """One reading of ``lg``; adds what it sees to ``found``; True where a choice arose."""
    text, n, i = lg.text, len(lg.text), 0
    ambiguous = False
    line_start = loose_start = True  # the standard's, and one where a comment's newline counts
    directive: str | None = None  # the directive of the current line
    before: list[str] = []  # the last significant tokens (for `defined __has_include`)
    while i < n:
        m = _TOKEN.match(text, i)
        kind, end = m.lastgroup, m.end()
        if kind == "nl":
            line_start = loose_start = True
            directive, before = None, []
            i = end
            continue
        if kind in ("ws", "lc"):
            i = end
            continue
        if kind == "bc":
            close = text.find("*/", end)
            end = n if close < 0 else close + 2
            if "\n" in text[i:end]:
                loose_start = True
            i = end
            continue
        if kind == "raw":
            end, differs = _raw_end(lg, original, m, revert)
            ambiguous |= differs
        elif kind == "lit":
            end, unterminated = _literal_end(text, end, m.group("q"))
            if unterminated:
                ambiguous = True
                if not to_eol:
                    end = m.end()
        elif kind == "hash" and (line_start or loose_start):
            i = _directive(lg, end, found, before)
            directive = before[-1] if before else None
            line_start = loose_start = False
            continue
        elif kind == "id" and m.group() in HAS_INCLUDE and not _named_only(directive, before):
            end = _has_include(lg, m, found)
        line_start = loose_start = False
        before = (before + [m.group() if kind in ("id", "other") else kind])[-3:]
        i = end
    return ambiguous


def _named_only(directive: str | None, before: list[str]) -> bool:
    """Whether a ``__has_include`` here is only named (``#ifdef __has_include``, ``defined(...)``)."""
    if directive in ("ifdef", "ifndef", "elifdef", "elifndef", "undef"):
        return True
    return bool(before) and (before[-1] == "defined" or before[-2:] == ["defined", "("])


def _literal_end(text: str, i: int, quote: str) -> tuple[int, bool]:
    """The end of a string or character literal opened just before ``i``; whether it is unterminated."""
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1, False
        if c == "\n":
            return i, True
        i += 1
    return len(text), True


def _raw_end(lg: _Logical, original: str, m: re.Match, revert: bool) -> tuple[int, bool]:
    """The end of a raw string literal: with its splices reverted (the standard) or not; whether
    the two readings differ."""
    close = ")" + m.group("delim") + '"'
    at = lg.text.find(close, m.end())
    plain = len(lg.text) if at < 0 else at + len(close)
    o = original.find(close, lg.original(m.end() - 1) + 1)
    reverted = len(lg.text) if o < 0 else lg.logical(o + len(close) - 1) + 1
    return (reverted if revert else plain), reverted != plain


def _skip(text: str, i: int) -> int:
    """Past whitespace (not newlines) and comments on the line."""
    while i < len(text):
        if text[i] in " \t\f\v\r":
            i += 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = len(text) if close < 0 else close + 2
        else:
            return i
    return i


def _header_name(text: str, i: int) -> tuple[str | None, bool, int]:
    """A ``"name"`` or ``<name>`` at ``i`` (read raw, as header names are); None if not literal."""
    if i < len(text) and text[i] in '"<':
        close = '"' if text[i] == '"' else ">"
        j = i + 1
        while j < len(text) and text[j] not in (close, "\n"):
            j += 1
        if j < len(text) and text[j] == close:
            return text[i + 1 : j], close == ">", j + 1
    return None, False, i


def _directive(lg: _Logical, i: int, found: dict, before: list[str]) -> int:
    """After a directive's ``#``: its name, and for one that names a file, the file."""
    text = lg.text
    i = _skip(text, i)
    m = re.compile(r"[A-Za-z_]\w*").match(text, i)
    before.clear()
    if m is None:
        return i
    name = m.group()
    before.append(name)
    if name not in INCLUDES:
        return m.end()
    j = _skip(text, m.end())
    header, angle, end = _header_name(text, j)
    use = Use(name, header, angle, (lg.original(i), lg.original(max(end, j + 1) - 1) + 1))
    found[(use.kind, use.span)] = use
    return end if header is not None else m.end()


def _has_include(lg: _Logical, m: re.Match, found: dict) -> int:
    """``__has_include ( "name" )`` from ``m``: the use, with its whole span (for the rewrite)."""
    text = lg.text
    j = _skip(text, m.end())
    header, angle, end = None, False, j
    if j < len(text) and text[j] == "(":
        header, angle, end = _header_name(text, _skip(text, j + 1))
        if header is not None:
            end = _skip(text, end)
            if end < len(text) and text[end] == ")":
                end += 1
            else:
                header = None
    use = Use(m.group(), header, angle, (lg.original(m.start()), lg.original(max(end, m.end()) - 1) + 1))
    found[(use.kind, use.span)] = use
    return max(end, m.end())


def outside(name: str) -> bool:
    """Whether a spelled name can only reach a file outside every include folder: absolute, with a
    ``..`` part, a backslash or an empty part.

    >>> outside("/etc/passwd"), outside("cute/../../x"), outside("cute/tensor.hpp")
    (True, True, False)
    """
    parts = name.split("/")
    return not name or name.startswith("/") or "\\" in name or ".." in parts or "" in parts[:-1]


def gather(
    source: str,
    name: str,
    folder: Path | None = None,
    include: tuple[Path, ...] = (),
    given: Mapping[str, str] | None = None,
) -> VirtualFiles:
    """The :class:`VirtualFiles` of ``source`` (named ``name``, in ``folder`` when it is a file):
    every user header it reaches, found in ``given`` (content by name), the includer's folder
    (for ``"..."``) or ``include``, read once; an ``#include`` of a name outside or through a
    link out of its folder refused as not given; ``__has_include`` of such a name rewritten to 0."""
    roots = [p.resolve() for p in include]
    headers: dict[str, str] = {}
    paths: dict[str, str] = {}
    total = [0]
    todo = [(source, folder.resolve() if folder else None, folder.resolve() if folder else None, None)]
    out_source = None
    while todo:
        text, here, root, spelled = todo.pop()
        rewritten = _rewrite(text, here, root, roots, given or {}, headers, paths, todo, total)
        if spelled is None:
            out_source = rewritten
        else:
            headers[spelled] = rewritten
    return VirtualFiles(out_source or "", tuple(sorted(headers.items())), paths)


def _rewrite(text, here, root, roots, given, headers, paths, todo, total) -> str:
    """``text`` with ``__has_include`` of outside names as ``0``; its user headers queued."""
    cuts = []
    for use in uses(text):
        if use.name is None:
            if use.kind in INCLUDES:
                raise InputError(
                    WHERE, "source", f'#{use.kind} must name a file literally ("name" or <name>)'
                )
            raise InputError(WHERE, "source", f'{use.kind} must name a header literally: {use.kind}("name")')
        if outside(use.name):
            if use.kind in INCLUDES:
                why = "names a file that was not given (an absolute name or one with '..')"
                raise InputError(WHERE, "source", f"#{use.kind} {why}", use.name)
            cuts.append(use.span)
            continue
        found = _find(use.name, use.angle, here, root, roots, given)
        if found is None:
            continue  # the toolkit's, NVRTC's own, or missing: the compile looks only there
        key, content, where, its_root = found
        if use.name in paths and paths[use.name] != key:
            raise InputError(WHERE, "source", "includes two different files by the one name", use.name)
        if use.name not in paths:
            paths[use.name] = key
            if len(paths) > MAX_HEADERS:
                raise InputError(WHERE, "source", f"reaches more than {MAX_HEADERS} headers")
            total[0] += len(content)
            if total[0] > MAX_BYTES:
                raise InputError(WHERE, "source", f"reaches more than {MAX_BYTES} bytes of headers")
            todo.append((content, where, its_root, use.name))
    out, at = [], 0
    for a, b in sorted(set(cuts)):
        if a < at:
            raise InputError(WHERE, "source", "has overlapping __has_include uses")
        out += [text[at:a], "0", "\n" * text.count("\n", a, b)]
        at = b
    return "".join(out) + text[at:]


def _find(name, angle, here, root, roots, given):
    """``(key, text, folder, root)`` of the user's file ``name``, or None where no user folder
    has it; a link out of its folder is refused."""
    if name in given:
        return f"given:{name}", given[name], None, None
    places = ([(here, root)] if not angle and here is not None else []) + [(r, r) for r in roots]
    for folder, top in places:
        p = folder / name
        if not os.path.lexists(p):
            continue
        real = p.resolve()
        if not real.is_relative_to(top) or not real.is_file():
            why = "is a link out of its folder or not a regular file: not given"
            raise InputError(WHERE, "source", f"#include {why}", name)
        from bankproof.models.files import read_text

        return str(real), read_text(real, MAX_BYTES, WHERE, "include"), real.parent, top
    return None


__all__ = ["gather", "uses", "outside", "VirtualFiles", "Use"]
