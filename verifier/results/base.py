"""The base of every result the API returns: frozen dataclasses whose ``to_json()`` is the CLI's ``--json``.

A field marked :func:`optional` is left out of the JSON when it is ``None`` (the schema's optional
keys); a field marked :func:`hidden` carries a Python value (a parsed layout, a matrix) that the
JSON does not have. Sequences are tuples; they print as JSON arrays.

>>> from bankproof.verifier.results import Proof
>>> r = Proof(status="proved", engine="z3", seconds=0.01)
>>> r.to_json()
'{"status": "proved", "engine": "z3", "seconds": 0.01}\\n'
>>> Proof(status="unknown", engine="z3", seconds=10.0, reason="time limit").to_dict()["reason"]
'time limit'
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import field, fields
from typing import Any, ClassVar

EXIT = {"proved": 0, "refuted": 1, "unknown": 3, "disagree": 4}
SCHEMA = 2  # every --json output's version: 2 is one access vocabulary across commands


class FrozenMap(Mapping):
    """A read-only mapping a record can hold (picklable, unlike ``MappingProxyType``: records
    travel between processes), equal to any mapping with the same items.

    >>> m = FrozenMap({"ld": 1})
    >>> m["ld"], dict(m), m == {"ld": 1}
    (1, {'ld': 1}, True)
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping | None = None):
        object.__setattr__(self, "_items", dict(items or {}))

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenMap is read-only")

    def __reduce__(self):
        return (FrozenMap, (self._items,))

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))


def optional(default: Any = None, key: str | None = None) -> Any:
    """A field left out of the JSON while it is ``None`` (named ``key`` there, when given)."""
    return field(default=default, metadata={"optional": True, **({"key": key} if key else {})})


def embedded() -> Any:
    """A record whose keys the JSON holds in place, beside the record's own (an access's
    :class:`~bankproof.verifier.results.answer.AccessAnswer` in every reader's row); its fields
    read as the holder's attributes (``row.wavefronts`` is ``row.answer.wavefronts``)."""
    return field(metadata={"embedded": True})


def hidden(default: Any = None) -> Any:
    """A field that is not part of the JSON (a Python object for API users and renderers)."""
    return field(default=default, metadata={"hidden": True}, repr=False, compare=False)


def plain(value: Any) -> Any:
    """``value`` with every record in it as its JSON form (``to_dict()``), sequences as lists."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value


@functools.cache
def _embedded_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.metadata.get("embedded"))


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


class Result:
    """JSON for a frozen result dataclass (mixin), and its other faces: ``to_text()`` (what the
    command prints, also ``str(result)``), ``_repr_html_`` (notebooks, one payload with any bank
    map inside) and ``_repr_svg_`` (bank maps). The renderers
    sit above the results in the import graph, so they fill :attr:`DISPLAY` themselves
    (``bankproof.verifier.render.display``, imported by ``bankproof`` on first use)."""

    DISPLAY: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def _display(self, face: str) -> Any:
        if not Result.DISPLAY:
            raise RuntimeError("no renderers are wired: import bankproof first")
        return Result.DISPLAY[face](self)

    def to_text(self) -> str:
        """What the ``bankproof`` command prints for this result."""
        return self._display("text")

    def __str__(self) -> str:
        """The report (``print(result)`` shows what the command prints; ``repr`` the record)."""
        return self.to_text() if Result.DISPLAY else repr(self)

    def _repr_html_(self) -> str:
        return self._display("html")

    def _repr_svg_(self) -> str | None:
        return self._display("svg")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        """One payload for a notebook: the HTML view (a bank map's SVG inside it, once) and the
        report as plain text."""
        return {"text/html": self._repr_html_(), "text/plain": self.to_text()}

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("hidden") or (f.metadata.get("optional") and value is None):
                continue
            if f.metadata.get("embedded"):
                out.update(value.to_dict())
                continue
            out[f.metadata.get("key", f.name)] = plain(value)
        return out

    def __getattr__(self, name: str) -> Any:
        """An embedded record's field, read through its holder (see :func:`embedded`); the first
        read puts a property on the holder's class, so the next ones are plain attribute reads."""
        if not name.startswith("_"):
            for inner in _embedded_names(type(self)):
                record = self.__dict__.get(inner)
                if record is not None and (name in _field_names(type(record)) or hasattr(type(record), name)):
                    setattr(type(self), name, property(operator.attrgetter(f"{inner}.{name}")))
                    return getattr(record, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_json(self) -> str:
        return json.dumps(self.to_dict()) + "\n"
