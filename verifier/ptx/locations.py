"""Source locations of PTX instructions: ``.loc F L C[, function_name N, inlined_at F2 L2 C2]``
lines read in order, giving each instruction its innermost location (a CuTe or CUB header's),
its chain of callers, and the user's line: the innermost of the chain in the kernel's own file.

>>> locs = Locations({"1": "user.cu", "2": "cute/copy.hpp"})
>>> locs.read(".loc 1 9 5")
>>> locs.read(".loc 2 40 7, function_name $L__info_string0, inlined_at 1 9 5")
>>> locs.inner.text(), locs.outer.text(), [c.line for c in locs.chain]
('cute/copy.hpp:40', 'user.cu:9', [40, 9])

Triton's PTX names the callers only in the ``.loc`` line's comment, by base name:

>>> locs = Locations({"1": "/tmp/k.py", "2": "/site/triton/language/standard.py"})
>>> locs.read(".loc 1 40 9")
>>> locs.read(".loc 2 263 15 // standard.py:263:15 @[ standard.py:293:36 @[ k.py:49:26 ] ]")
>>> locs.outer.text(), [c.line for c in locs.chain]
('/tmp/k.py:49', [263, 293, 49])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_LOC = re.compile(r"^\.loc\s+(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})(.*)$")
_INLINED = re.compile(r"inlined_at\s+(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})")
_COMMENT_LOC = re.compile(r"([^\s@\[\]:]+):(\d{1,9}):(\d{1,9})")


@dataclass(frozen=True)
class Loc:
    """A source location: the file as ``.file`` names it, line and column (1-based; 0 = unknown)."""

    file: str
    line: int
    column: int = 0

    def text(self) -> str:
        return f"{self.file}:{self.line}"


class Locations:
    """``.loc`` lines: the current innermost location and, through ``inlined_at``, the outermost."""

    def __init__(self, files: Mapping[str, str]):
        self.files = files
        self.parent: dict[tuple[str, int, int], tuple[str, int, int]] = {}
        self.inner: Loc | None = None
        self.outer: Loc | None = None
        self.chain: tuple[Loc, ...] = ()
        self.own: str | None = None
        self.named: Loc | None = None  # what the line itself names: its ``inlined_at``, else its own
        self._seen: dict[str, tuple] = {}  # line -> (named, inner, chain, the user's line)
        self._locs: dict[tuple[str, int, int], Loc] = {}
        self._by_base: dict[str, str] | None = None  # a ``.file``'s base name -> its index, where unique

    def read(self, line: str) -> None:
        hit = self._seen.get(line)  # a line read before, the callers unchanged since: its answer
        if hit is None:
            hit = self._read(line)
            if hit is None:
                return
        self.named, self.inner, self.chain, mine = hit
        if mine is not None:
            self.outer = mine
        elif self.outer is None:
            self.outer = self.chain[-1]

    def _read(self, line: str) -> tuple | None:
        m = _LOC.match(line)
        if not m:
            return None
        key = (m.group(1), int(m.group(2)), int(m.group(3)))
        inl = _INLINED.search(m.group(4))
        if inl:
            ups = [(inl.group(1), int(inl.group(2)), int(inl.group(3)))]
        else:
            ups = self._comment_chain(m.group(4))
        for below, up in zip([key, *ups], ups, strict=False):
            if up != below and self.parent.get(below) != up:
                self.parent[below] = up
                self._seen.clear()  # a new caller: chains read before may change
        chain, seen = [key], {key}
        while chain[-1] in self.parent and self.parent[chain[-1]] not in seen:
            chain.append(self.parent[chain[-1]])
            seen.add(chain[-1])
        if self.own is None:
            self.own = key[0]  # the kernel's own file: where its first location is
        mine = next((k for k in chain if k[0] == self.own), None)  # the innermost line of the user's file
        hit = (self._loc(ups[0] if ups else key), self._loc(key), tuple(self._loc(k) for k in chain),
               None if mine is None else self._loc(mine))  # fmt: skip
        self._seen[line] = hit
        return hit

    def _comment_chain(self, rest: str) -> list[tuple[str, int, int]]:
        """The callers LLVM prints after a ``.loc`` without ``inlined_at`` (Triton's PTX):
        ``// standard.py:293:36 @[ k.py:49:26 ]``, each file named by its base name, kept only where
        that name is one ``.file``'s (else no callers are read)."""
        if "@[" not in rest or "//" not in rest:
            return []
        if self._by_base is None:
            count: dict[str, list[str]] = {}
            for index, path in self.files.items():
                count.setdefault(str(path).rsplit("/", 1)[-1], []).append(index)
            self._by_base = {b: ix[0] for b, ix in count.items() if len(ix) == 1}
        found = _COMMENT_LOC.findall(rest.split("//", 1)[1])
        ups = [(self._by_base.get(f), int(ln), int(col)) for f, ln, col in found[1:]]
        return [] if any(u[0] is None for u in ups) else ups

    def _loc(self, key: tuple[str, int, int]) -> Loc:
        if key not in self._locs:
            self._locs[key] = Loc(self.files.get(key[0], key[0]), key[1], key[2])
        return self._locs[key]
