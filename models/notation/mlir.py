"""A small reader for MLIR attribute text as Triton prints it (no Triton needed).

It understands ``#dialect.kind<{key = value, ...}>`` with integer, boolean, list and nested
attribute values, the trailing ``, key = value`` and leading ``[a:+b, ...]`` forms used by
``shared_linear`` and ``padded_shared``, and ``#alias`` references resolved from
``#alias = ...`` definitions.

>>> a = parse_attribute("#ttg.slice<{dim = 0, parent = #b}>", {"b": "#ttg.foo<{x = [1, 2]}>"})
>>> a.kind, a.params["dim"], a.params["parent"].params["x"]
('ttg.slice', 0, [1, 2])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bankproof.models.errors import InputError

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<hash>\#[A-Za-z_][\w.$]*)
    | (?P<int>-?\d+)
    | (?P<ident>[A-Za-z_][\w.]*)
    | (?P<str>"[^"]*")
    | (?P<punct>[<>{}\[\]=,:+()])
    )""",
    re.VERBOSE,
)


_MAX_NESTING = 32
MAX_ITEMS = 20_000  # commas and brackets of one attribute (a rank-8 linear layout of 30 bases: ~500)


@dataclass
class Attribute:
    """A parsed attribute: ``kind`` (``ttg.blocked``), its dict ``params``, extra trailing
    ``key = value`` pairs, and for ``padded_shared`` the ``[interval:+pad]`` list."""

    kind: str
    params: dict = field(default_factory=dict)
    trailing: dict = field(default_factory=dict)
    intervals: list[tuple[int, int]] = field(default_factory=list)
    text: str = ""


def split_aliases(text: str) -> tuple[dict[str, str], str]:
    """Split TTGIR-style text into ``#name = ...`` alias definitions and the remaining text.

    >>> split_aliases("#a = #ttg.x<{}>\\n#ttg.y<{p = #a}>")
    ({'a': '#ttg.x<{}>'}, '#ttg.y<{p = #a}>')
    """
    aliases: dict[str, str] = {}
    rest = []
    for line in text.splitlines():
        m = re.match(r"\s*#([A-Za-z_][\w$]*)\s*=\s*(#.*?)\s*$", line)
        if m and "." not in m.group(1):
            aliases[m.group(1)] = m.group(2)
        elif line.strip():
            rest.append(line.strip())
    return aliases, " ".join(rest)


class _Reader:
    def __init__(self, text: str, aliases: Mapping[str, str], depth: int = 0):
        self.text = text
        self.aliases = aliases
        self.depth = depth
        self.toks: list[tuple[str, str, int]] = []
        pos, end = 0, len(text.rstrip())  # (no slice per token: a long text reads in linear time)
        while pos < end:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise self.error(f"unexpected character {text[pos:].lstrip()[:1]!r}", pos)
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def error(self, problem: str, pos: int | None = None) -> InputError:
        if pos is None:
            pos = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        return InputError("triton", "attribute", f"{problem} at column {pos + 1}", repr(self.text))

    def peek(self) -> tuple[str, str]:
        if self.i < len(self.toks):
            k, v, _ = self.toks[self.i]
            return k, v
        return "", ""

    def take(self, value: str | None = None, kind: str | None = None) -> str:
        k, v = self.peek()
        if not k:
            raise self.error(f"unexpected end of text, expected {value or kind}")
        if (value is not None and v != value) or (kind is not None and k != kind):
            raise self.error(f"expected {value or kind}, found {v!r}")
        self.i += 1
        return v

    def attribute(self, depth: int = 0) -> Attribute:
        if depth > _MAX_NESTING:
            raise self.error(f"nests deeper than {_MAX_NESTING} levels")
        start = self.toks[self.i][2] if self.i < len(self.toks) else 0
        name = self.take(kind="hash")[1:]
        if "." not in name:
            if name not in self.aliases:
                raise self.error(f"unknown alias #{name}")
            if self.depth > 16:
                raise self.error("aliases nest too deeply")
            return parse_attribute(self.aliases[name], self.aliases, self.depth + 1)
        attr = Attribute(kind=name)
        if self.peek()[1] == "<":
            self.take("<")
            if self.peek()[1] == "[":
                attr.intervals = self.intervals()
            if self.peek()[1] == "{":
                attr.params = self.dict(depth + 1)
            while self.peek()[1] == ",":
                self.take(",")
                key = self.take(kind="ident")
                self.take("=")
                attr.trailing[key] = self.value(depth + 1)
            self.take(">")
        end = self.toks[self.i - 1][2] + len(self.toks[self.i - 1][1])
        attr.text = self.text[start:end]
        return attr

    def intervals(self) -> list[tuple[int, int]]:
        out = []
        self.take("[")
        while True:
            interval = self._int()
            self.take(":")
            self.take("+")
            pad = self._int()
            out.append((interval, pad))
            if self.peek()[1] != ",":
                break
            self.take(",")
        self.take("]")
        return out

    def _int(self) -> int:
        v = self.take(kind="int")
        if len(v.lstrip("-")) > 18:
            raise self.error(f"has an integer of {len(v)} digits (beyond 64 bits)")
        return int(v)

    def dict(self, depth: int = 0) -> dict:
        out: dict = {}
        self.take("{")
        if self.peek()[1] == "}":
            self.take("}")
            return out
        while True:
            key = self.take(kind="ident")
            if key in out:
                raise self.error(f"duplicate key {key!r}")
            self.take("=")
            out[key] = self.value(depth + 1)
            if self.peek()[1] != ",":
                break
            self.take(",")
        self.take("}")
        return out

    def value(self, depth: int = 0) -> object:
        if depth > _MAX_NESTING:
            raise self.error(f"nests deeper than {_MAX_NESTING} levels")
        k, v = self.peek()
        if k == "int":
            if len(v.lstrip("-")) > 18:
                raise self.error(f"has an integer of {len(v)} digits (beyond 64 bits)")
            self.i += 1
            if self.peek()[1] == ":":  # typed integer `4 : i32`
                self.take(":")
                self.take(kind="ident")
            return int(v)
        if k == "ident" and v in ("true", "false"):
            self.i += 1
            return v == "true"
        if k == "str":
            self.i += 1
            return v[1:-1]
        if k == "hash":
            return self.attribute(depth + 1)
        if v == "{":  # a nested dict (amd_wmma's ctaLayout)
            return self.dict(depth + 1)
        if v == "[":
            self.take("[")
            items = []
            if self.peek()[1] != "]":
                while True:
                    items.append(self.value(depth + 1))
                    if self.peek()[1] != ",":
                        break
                    self.take(",")
            self.take("]")
            return items
        raise self.error(f"expected a value, found {v!r}" if v else "unexpected end of text")


_BRACKET = re.compile(r"[<\[({]")
_COMMA = re.compile(r"\s*,\s*")
_SQUARE_ONLY = re.compile(r"[^\[\]<>(){}]*(?:\[[^\[\]<>(){},]*\][^\[\]<>(){}]*)*")


def split_top(text: str) -> list[str]:
    """Split at the commas outside any bracket (``<>``, ``[]``, ``()``, ``{}``): MLIR types and
    attribute lists, PTX operand lists.

    >>> split_top("[%r1+4], {%r2, %r3}, 16")
    ['[%r1+4]', '{%r2, %r3}', '16']
    """
    if not _BRACKET.search(text):  # no brackets: every comma splits
        return _COMMA.split(text.strip())
    if _SQUARE_ONLY.fullmatch(text):  # PTX's "[%r1+4], %r2": balanced [...] holding no comma
        return _COMMA.split(text.strip())
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<[({":
            depth += 1
        elif c in ">])}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur).strip())
    return parts


def parse_attribute(text: str, aliases: Mapping[str, str] | None = None, depth: int = 0) -> Attribute:
    """Parse one attribute (after resolving any ``#alias = ...`` lines in ``text``)."""
    defs, body = split_aliases(text)
    items = body.count(",") + body.count("[")
    if items > MAX_ITEMS:  # counted before anything is read: no layout attribute is near it
        raise InputError("triton", "attribute", f"has more than {MAX_ITEMS} list items and fields", items)
    all_aliases = {**(aliases or {}), **defs}
    r = _Reader(body, all_aliases, depth)
    if not r.toks:
        raise InputError("triton", "attribute", "is empty")
    if r.peek()[0] != "hash":
        raise r.error("must start with '#'")
    attr = r.attribute()
    if r.i != len(r.toks):
        raise r.error("unexpected text after the attribute")
    return attr
