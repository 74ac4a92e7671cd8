"""Records read back from their JSON form (a results store, a cache, a file a user gives), every
field checked against the record's own type hints like user input: an unknown or missing key, a
value of another type, a string longer than :data:`MAX_TEXT`, or a sequence longer than
:data:`MAX_ITEMS` is refused with an ``InputError`` naming the field's path. Nothing is evaluated;
the walk follows the record's types, so its depth is the types' depth, whatever the data.

>>> from dataclasses import dataclass
>>> from bankproof.verifier.results.base import Result, optional
>>> @dataclass(frozen=True)
... class Point(Result):
...     x: int
...     tags: tuple[str, ...]
...     note: str | None = optional()
>>> p = decode(Point, {"x": 3, "tags": ["a"]}, "point")
>>> p, p.to_dict() == {"x": 3, "tags": ["a"]}
(Point(x=3, tags=('a',), note=None), True)
>>> decode(Point, {"x": 1.5, "tags": []}, "point")
Traceback (most recent call last):
...
bankproof.models.errors.InputError: point: x must be an integer, got 1.5
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from bankproof.models.errors import InputError
from bankproof.verifier.results.base import FrozenMap

MAX_TEXT = 1 << 20  # characters in one string field
MAX_ITEMS = 1 << 20  # items in one sequence or mapping field
R = TypeVar("R")


def decode(cls: type[R], value: object, where: str) -> R:
    """``value`` (parsed JSON) as a ``cls`` record (see the module docstring)."""
    return _value(cls, value, where, "")


@functools.cache
def _hints(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    """(key, attribute, type, required) of each JSON field of a record class (an embedded record's
    fields are the holder's keys: their attribute is ``embedded.field``)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("hidden"):
            continue
        if f.metadata.get("embedded"):
            out.extend((key, f"{f.name}.{name}", hint, req) for key, name, hint, req in _hints(hints[f.name]))
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out.append((f.metadata.get("key", f.name), f.name, hints[f.name], required))
    return tuple(out)


def _record(cls: type, value: object, where: str, path: str) -> object:
    if not isinstance(value, dict):
        raise InputError(where, path or "record", "must be an object", _short(value))
    known = {key for key, *_ in _hints(cls)}
    extra = sorted(k for k in value if k not in known)
    if extra:
        raise InputError(where, _join(path, str(extra[0])[:80]), "is not a field of " + cls.__name__)
    kwargs = {}
    for key, name, hint, required in _hints(cls):
        if key not in value:
            if required:
                raise InputError(where, _join(path, key), "is missing")
            continue
        kwargs[name] = _value(hint, value[key], where, _join(path, key))
    embeds = _embeds(cls)
    if embeds:
        inner: dict[str, dict] = {}
        for name in [n for n in kwargs if "." in n]:
            holder, attr = name.split(".", 1)
            inner.setdefault(holder, {})[attr] = kwargs.pop(name)
        for name, record in embeds:
            kwargs[name] = record(**inner.get(name, {}))
    return cls(**kwargs)


@functools.cache
def _embeds(cls: type) -> tuple[tuple[str, type], ...]:
    """(attribute, record type) of each embedded record of ``cls``."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls) if f.metadata.get("embedded"))


@functools.cache
def _form(hint: Any) -> tuple[str, tuple]:
    """(record / union / tuple / map / scalar, the type's arguments) of a hint, worked out once."""
    if dataclasses.is_dataclass(hint):
        return "record", ()
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return "union", args
    if origin is tuple:
        return "tuple", args
    if origin in (Mapping, dict):
        return "map", args
    return "scalar", ()


def _value(hint: Any, value: object, where: str, path: str) -> Any:
    form, args = _form(hint)
    if form == "record":
        return _record(hint, value, where, path)
    if form == "scalar":
        return _scalar(hint, value, where, path)
    if form == "union":
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for a in inner:
            try:
                return _value(a, value, where, path)
            except InputError as e:
                errors.append(e)
        raise (
            errors[-1]
            if len(inner) == 1
            else InputError(where, path, f"must be {_name(hint)}", _short(value))
        )
    if form == "tuple":
        if not isinstance(value, (list, tuple)) or len(value) > MAX_ITEMS:
            raise InputError(where, path, "must be a list", _short(value))
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], v, where, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise InputError(where, path, f"must have {len(args)} items", _short(value))
        return tuple(_value(a, v, where, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if not isinstance(value, dict) or len(value) > MAX_ITEMS:  # a map
        raise InputError(where, path, "must be an object", _short(value))
    return FrozenMap({_value(args[0], k, where, path): _value(args[1], v, where, _join(path, k))
                             for k, v in value.items()})  # fmt: skip


def _scalar(hint: Any, value: object, where: str, path: str) -> Any:
    if hint is bool:
        if not isinstance(value, bool):
            raise InputError(where, path, "must be true or false", _short(value))
    elif hint is int:
        if type(value) is not int or abs(value) >= 1 << 63:
            raise InputError(where, path, "must be an integer", _short(value))
    elif hint is float:
        if type(value) not in (int, float) or value != value or abs(value) == float("inf"):
            raise InputError(where, path, "must be a number", _short(value))
        return float(value)
    elif hint is str:
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise InputError(where, path, "must be text", _short(value))
    elif hint is not Any:
        raise TypeError(f"decode: no rule for {hint!r}")  # a record type this module does not know
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _name(hint: Any) -> str:
    return " or ".join(getattr(a, "__name__", str(a)) for a in typing.get_args(hint))


def _short(value: object) -> object:
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."
