"""Reading a Triton layout attribute's fields (with checks naming the field) and the interface
every attribute kind shares (:class:`TritonLayout`).

>>> cga_text([[0, 1]])
', CGALayout = [[0, 1]]'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bankproof.models.errors import InputError, is_pow2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout


# ----- field readers ---------------------------------------------------------------------------
def fmt_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    if isinstance(v, TritonLayout):
        return v.text()
    return str(v)


MAX_FIELD = 1 << 20  # no integer field of a layout attribute (vec, phases, widths, alignment) is larger


class Fields:
    """Reads and checks an attribute's fields, naming the kind and field in every error."""

    def __init__(self, kind: str, params: Mapping[str, object], allowed: Sequence[str]):
        self.kind = kind
        self.params = dict(params)
        for key in self.params:
            if key not in allowed:
                raise InputError(kind, key, f"is not a field of {kind} (fields: {', '.join(allowed)})")

    def get(self, key: str, default: object = ...) -> object:
        if key not in self.params:
            if default is ...:
                raise InputError(self.kind, key, "is missing")
            return default
        return self.params[key]

    def int(self, key: str, default: object = ..., pow2: bool = False, minimum: int = 0,
            maximum: int = MAX_FIELD) -> int:  # fmt: skip
        v = self.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool):
            raise InputError(self.kind, key, "must be an integer", fmt_value(v))
        if v > maximum:
            raise InputError(self.kind, key, f"must be at most {maximum}", v)
        if pow2 and not is_pow2(v):
            raise InputError(self.kind, key, "must be a power of two", v)
        if v < minimum:
            raise InputError(self.kind, key, f"must be >= {minimum}", v)
        return v

    def bool(self, key: str, default: object = ...) -> bool:
        v = self.get(key, default)
        if not isinstance(v, bool):
            raise InputError(self.kind, key, "must be true or false", fmt_value(v))
        return v

    def ints(self, key: str, default: object = ..., pow2: bool = False, rank: int | None = None) -> list[int]:
        v = self.get(key, default)
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise InputError(self.kind, key, "must be a list of integers", fmt_value(v))
        if rank is not None and len(v) != rank:
            raise InputError(self.kind, key, f"must have {rank} entries (the layout's rank)", fmt_value(v))
        if pow2:
            for x in v:
                if not is_pow2(x):
                    raise InputError(self.kind, key, "entries must be powers of two", fmt_value(v))
        return list(v)

    def order(self, key: str, rank: int) -> list[int]:
        v = self.ints(key, rank=rank)
        if sorted(v) != list(range(rank)):
            raise InputError(self.kind, key, f"must be a permutation of 0..{rank - 1}", fmt_value(v))
        return v

    def bases(self, key: str, default: object = ..., rank: int | None = None) -> list[list[int]]:
        v = self.get(key, default)
        ok = isinstance(v, list) and all(
            isinstance(b, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in b)
            for b in v
        )
        if not ok:
            raise InputError(
                self.kind,
                key,
                "must be a list of bases [[c0, c1, ...], ...] of non-negative integers",
                fmt_value(v),
            )
        for b in v:
            if rank is not None and len(b) != rank:
                raise InputError(self.kind, key, f"bases must have {rank} coordinates", fmt_value(b))
        return [list(b) for b in v]


def check_shape(kind: str, shape: Sequence[int], rank: int) -> None:
    if len(shape) != rank:
        raise InputError(
            kind, "shape", f"must have {rank} dims (the layout's rank)", "x".join(map(str, shape))
        )
    for s in shape:
        if not is_pow2(s):
            raise InputError(kind, "shape", "sizes must be powers of two", "x".join(map(str, shape)))


def cga_layout(f: Fields, rank: int) -> list[list[int]]:
    cga = f.bases("CGALayout", [], rank=rank)
    for b in cga:
        if any(x and not is_pow2(x) for x in b):
            raise InputError(f.kind, "CGALayout", "coordinates must be 0 or powers of two", fmt_value(b))
    return cga


def cga_text(cga: Sequence[Sequence[int]]) -> str:
    return f", CGALayout = {fmt_value([list(b) for b in cga])}" if cga else ""


# ----- the kinds -------------------------------------------------------------------------------
class TritonLayout:
    """Common interface: ``kind``, ``rank``, ``text()``, ``to_layout(shape)``."""

    kind = ""
    memory = False

    @property
    def rank(self) -> int:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def to_layout(self, shape: Sequence[int]) -> LinearLayout | PaddedLayout:
        raise NotImplementedError

    def cga(self) -> list[list[int]]:
        return []


def bases_tuple(bases: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(b) for b in bases)


def product_of(xs: Sequence[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out
