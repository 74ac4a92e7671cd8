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

import json
from collections.abc import Callable
from dataclasses import field, fields
from typing import Any, ClassVar

EXIT = {"proved": 0, "refuted": 1, "unknown": 3, "disagree": 4}


def optional(default: Any = None) -> Any:
    """A field left out of the JSON while it is ``None``."""
    return field(default=default, metadata={"optional": True})


def hidden(default: Any = None) -> Any:
    """A field that is not part of the JSON (a Python object for API users and renderers)."""
    return field(default=default, metadata={"hidden": True}, repr=False, compare=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Result:
    """JSON for a frozen result dataclass (mixin), and its other faces: ``to_text()`` (what the
    command prints), ``_repr_html_`` (notebooks) and ``_repr_svg_`` (bank maps). The renderers
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

    def _repr_html_(self) -> str:
        return self._display("html")

    def _repr_svg_(self) -> str | None:
        return self._display("svg")

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("hidden") or (f.metadata.get("optional") and value is None):
                continue
            out[f.metadata.get("key", f.name)] = _plain(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict()) + "\n"
