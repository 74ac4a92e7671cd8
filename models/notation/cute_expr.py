"""CuTe text as people hold it: what C++ ``print`` and the Python DSL print, and the C++
expressions that build a layout, read into plain values.

Printed forms: ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)`` (C++), ``S<3,4,3> o 0 o (8,64):(64,1)``
(DSL), ``Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)`` (a swizzle of byte addresses).
Expressions: ``Int<64>{}``, ``_64``, ``make_shape``/``make_stride``, ``Shape<...>``,
``Layout<Shape<...>, Stride<...>>{}``, ``make_layout(shape[, stride | LayoutRight{} |
LayoutLeft{}])``, ``composition(Swizzle<3,3,3>{}, layout)``, a view ``composition(layout,
layout)``, ``make_composed_layout(sw, off, layout)``,
``ComposedLayout<Swizzle<...>, smem_ptr_flag_bits<16>, Layout<...>>`` and
``tile_to_shape(atom, shape[, LayoutRight{}])``. Nothing is executed: the text is tokenized and
read by a small recursive-descent reader with length and depth limits.

>>> v = read("composition(Swizzle<3,3,3>{}, make_layout(make_shape(Int<8>{}, _64{}), LayoutRight{}))")
>>> v.swizzle, v.layout.shape, v.layout.stride
(Swizzle(b=3, m=3, s=3), (8, 64), (64, 1))
"""

from __future__ import annotations

import re

from bankproof.models.errors import InputError
from bankproof.models.notation.cute_compose import composition
from bankproof.models.notation.cute_shapes import Nested, compact, congruent, fmt, leaves, size
from bankproof.models.notation.cute_values import (
    GMMA_ATOM,
    Composed,
    Layout,
    PointerValue,
    Swizzle,
    Tag,
    gmma_layout_atom,
)

MAX_TEXT = 20_000
MAX_DEPTH = 32
MAX_INT = 1 << 40  # the largest magnitude of any integer in CuTe text (sizes, strides, swizzle fields)


_TOKEN = re.compile(
    r"\s*(?:(smem_ptr\[(\d+)b\]\([^()]*\))|([A-Za-z_][A-Za-z_0-9]*)|(-?\d+)|(∘|[<>(){},:\[\]]))"
)


_NAMESPACE = re.compile(r"\b[A-Za-z_]\w*::")


def strip_namespaces(text: str) -> str:
    """``text`` without namespace qualifiers (``cute::``, ``GMMA::Major::``, ``SM90::GMMA::``).

    >>> strip_namespaces("cute::SM90_64x64x16_F32F16F16_RS<GMMA::Major::K, GMMA::Major::K>")
    'SM90_64x64x16_F32F16F16_RS<K, K>'
    """
    return _NAMESPACE.sub("", text)


def tokens(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` tokens: ``ptr``, ``name``, ``num``, ``op``; ``cute::`` prefixes dropped.

    >>> tokens("Sw<3,4,3> o _0")[:3]
    [('name', 'Sw'), ('op', '<'), ('num', '3')]
    """
    if not isinstance(text, str):
        raise InputError("cute", "layout", "must be a string", type(text).__name__)
    if len(text) > MAX_TEXT:
        raise InputError("cute", "layout", f"is longer than {MAX_TEXT} characters", len(text))
    text = strip_namespaces(text).strip()
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            rest = text[pos:].strip()
            if not rest:
                break
            raise InputError("cute", "layout", f"has unexpected {rest[:1]!r}", text[:80])
        if m.group(1):
            out.append(("ptr", m.group(2)))
        elif m.group(3):
            out.append(("name", m.group(3)))
        elif m.group(4):
            out.append(("num", m.group(4)))
        else:
            out.append(("op", "∘" if m.group(5) == "∘" else m.group(5)))
        pos = m.end()
    return out


def read(text: str):
    """Read CuTe text into a value: an int, a tuple, a :class:`Layout`, a :class:`Composed`, a
    :class:`Swizzle` or a :class:`Tag`."""
    r = _Reader(tokens(text), text)
    v = r.chain(0)
    if r.pos != len(r.toks):
        raise r.error(f"has unexpected {r.toks[r.pos][1]!r}")
    return v


class _Reader:
    def __init__(self, toks: list[tuple[str, str]], text: str):
        self.toks, self.text, self.pos = toks, text, 0

    def error(self, problem: str) -> InputError:
        return InputError("cute", "layout", problem, self.text.strip()[:120])

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[self.pos + k] if self.pos + k < len(self.toks) else ("end", "")

    def take(self, want: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t[0] == "end":
            raise self.error("ends early")
        if want is not None and t[1] != want:
            raise self.error(f"expected {want!r} but found {t[1]!r}")
        self.pos += 1
        return t

    def chain(self, depth: int):
        """``a o b o c``: a swizzle, an offset or ``smem_ptr``, and a layout."""
        parts = [self.pair(depth)]
        while self.peek() in (("name", "o"), ("op", "∘")):
            self.pos += 1
            parts.append(self.pair(depth))
        return parts[0] if len(parts) == 1 else compose(parts, self.error)

    def pair(self, depth: int):
        """``shape:stride`` or a single value."""
        v = self.primary(depth)
        if self.peek() == ("op", ":"):
            self.pos += 1
            d = self.primary(depth)
            return make_layout(v, d, self.error)
        return v

    def args(self, close: str, depth: int) -> list:
        out = []
        if self.peek() == ("op", close):
            self.pos += 1
            return out
        while True:
            out.append(self.chain(depth + 1))
            t = self.take()
            if t[1] == close:
                return out
            if t[1] != ",":
                raise self.error(f"expected ',' or {close!r} but found {t[1]!r}")

    def primary(self, depth: int):
        if depth > MAX_DEPTH:
            raise self.error(f"nests deeper than {MAX_DEPTH} levels")
        kind, t = self.take()
        if kind in ("num", "ptr") and len(t.lstrip("-")) > 13:  # 2^40 has 13 digits
            raise self.error(f"has an integer beyond 2^40 ({len(t)} digits)")
        if kind == "num":
            return int(t)
        if kind == "ptr":
            return PointerValue(int(t))
        if t == "(":
            items = self.args(")", depth)
            if not items:
                raise self.error("has an empty tuple '()'")
            return tuple(items)
        if kind != "name":
            raise self.error(f"has unexpected {t!r}")
        if self.peek() == ("op", "<"):
            self.pos += 1
            targs = self.args(">", depth)
            self._braces()
            return template(t, targs, self.error)
        if self.peek() == ("op", "("):
            self.pos += 1
            return call(t, self.args(")", depth), self.error)
        self._braces()
        if re.fullmatch(r"_\d+", t):
            if len(t) > 14:
                raise self.error(f"has an integer beyond 2^40 ({len(t) - 1} digits)")
            return int(t[1:])
        return Tag(t)

    def _braces(self) -> None:
        if self.peek() == ("op", "{"):
            self.pos += 1
            self.take("}")


# ----- meaning -----------------------------------------------------------------------------------
def _int(v, what: str, error) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise error(f"{what} must be an integer")
    if abs(v) > MAX_INT:
        raise error(f"{what} is beyond 2^40 in magnitude ({v.bit_length()}-bit)")
    return v


def _tuple(v, error) -> Nested:
    if isinstance(v, int) and not isinstance(v, bool):
        if abs(v) > MAX_INT:
            raise error(f"has an entry beyond 2^40 in magnitude ({v.bit_length()}-bit)")
        return v
    if isinstance(v, tuple):
        return tuple(_tuple(x, error) for x in v)
    raise error("shape and stride entries must be integers or tuples")


def make_layout(shape, stride, error) -> Layout:
    """``shape:stride`` with its nesting checked; a tag stride (``LayoutRight``) makes it compact."""
    shape = _tuple(shape, error)
    if isinstance(stride, Tag):
        if stride.name in ("LayoutRight", "GenRowMajor"):
            return Layout(shape, compact(shape, right=True))
        if stride.name in ("LayoutLeft", "GenColMajor"):
            return Layout(shape, compact(shape, right=False))
        raise error(f"has a stride {stride.name!r} (a stride tuple, LayoutLeft or LayoutRight)")
    stride = _tuple(stride, error)
    if not congruent(shape, stride):
        raise InputError(
            "cute", "stride", f"must have the same nesting as the shape {fmt(shape)}", fmt(stride)
        )
    return Layout(shape, stride)


def compose(parts: list, error) -> Composed:
    """``swizzle o [offset | smem_ptr] o layout`` (each part optional but the layout)."""
    *front, last = parts
    if isinstance(last, Composed):
        return last if not front else compose([*front, last.layout], error)
    if not isinstance(last, Layout):
        raise error("must end its 'o' chain with a layout (shape):(stride)")
    sw, offset, ptr = None, 0, 0
    for p in front:
        if isinstance(p, Swizzle) and sw is None and not offset and not ptr:
            sw = p if p.b else None  # Sw<0,M,S> is the identity
        elif isinstance(p, PointerValue) and not ptr:
            ptr = p.bits
        elif isinstance(p, int) and not isinstance(p, bool) and not offset:
            offset = p
        else:
            raise error("must look like Sw<B,M,S> o offset o (shape):(stride)")
    return Composed(sw, offset, ptr, last)


def template(name: str, targs: list, error):
    if name in ("Int", "C", "Int32", "integral_constant"):
        if len(targs) != 1:
            raise error(f"{name}<N> takes one number")
        return _int(targs[-1], f"{name}<N>", error)
    if name in ("Sw", "S", "Swizzle"):
        if len(targs) != 3:
            raise InputError("cute", "swizzle", "must look like Sw<B,M,S> o (shape):(stride)", f"{name}<...>")
        return Swizzle(*(_int(a, "Swizzle B, M, S", error) for a in targs))
    if name in ("Tile",) and not all(isinstance(a, (int, tuple)) for a in targs):
        return Tag("Tile", tuple(targs))  # a TiledMMA permutation: _, sizes and layouts
    if name in ("Shape", "Stride", "Step", "tuple", "Tile"):
        return tuple(_tuple(a, error) for a in targs)
    if name == "Layout":
        if len(targs) not in (1, 2):
            raise error("Layout<Shape, Stride> takes a shape and an optional stride")
        shape = targs[0]
        return make_layout(shape, targs[1] if len(targs) == 2 else Tag("LayoutLeft"), error)
    gmma = GMMA_ATOM.fullmatch(name)
    if gmma:
        return gmma_layout_atom(gmma.group(1), gmma.group(2), targs, error)
    if name in ("smem_ptr_flag_bits",):
        return PointerValue(_int(targs[0], "smem_ptr_flag_bits<N>", error))
    if name == "ComposedLayout":
        if len(targs) != 3:
            raise error("ComposedLayout<Swizzle, offset, Layout> takes three arguments")
        return compose(targs, error)
    return Tag(name, tuple(targs))


def call(name: str, args: list, error):
    if name == "make_tile" and not all(isinstance(a, (int, tuple)) for a in args):
        return Tag("Tile", tuple(args))
    if name in ("make_shape", "make_stride", "make_step", "make_tuple", "make_tile"):
        return tuple(_tuple(a, error) for a in args)
    if name == "make_layout":
        if len(args) == 1:
            return make_layout(args[0], Tag("LayoutLeft"), error)
        if len(args) == 2 and not isinstance(args[0], Layout):
            return make_layout(args[0], args[1], error)
        if all(isinstance(a, Layout) for a in args):  # modes side by side
            return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
        raise error("make_layout takes a shape and a stride (or LayoutLeft{} / LayoutRight{})")
    if name == "composition":
        if len(args) != 2:
            raise error("composition takes two arguments: composition(Swizzle<B,M,S>{} or layout, layout)")
        if isinstance(args[0], Swizzle):
            return compose([args[0], args[1]], error)
        return composition(args[0], args[1], error)
    if name == "make_composed_layout":
        if len(args) != 3:
            raise error("make_composed_layout takes a swizzle, an offset and a layout")
        return compose(args, error)
    if name == "tile_to_shape":
        if len(args) not in (2, 3):
            raise error("tile_to_shape takes an atom, a shape and an optional order")
        return tile_to_shape(args[0], args[1], args[2] if len(args) == 3 else Tag("LayoutLeft"), error)
    return Tag(name, tuple(args))


def tile_to_shape(atom, shape, order, error):
    """CuTe's ``tile_to_shape``: repeat ``atom`` (a layout or a swizzled layout) over ``shape``,
    repeats ordered column-major (``LayoutLeft``, the default) or row-major; each result mode is
    ``(atom mode, repeats)``. A target of higher rank pads the atom with size-1 modes (CuTe's
    ``append<R>``): ``make_shape(M, K, Stages)`` adds a stage mode, the slowest.

    >>> tile_to_shape(Layout((8, 64), (64, 1)), (16, 128), Tag("LayoutLeft"), None)
    Layout(shape=((8, 2), (64, 2)), stride=((64, 512), (1, 1024)))
    >>> tile_to_shape(Layout((8, 64), (64, 1)), (8, 64, 3), Tag("LayoutLeft"), None).shape
    ((8, 1), (64, 1), 3)
    """
    inner = atom.layout if isinstance(atom, Composed) else atom
    if not isinstance(inner, Layout) or not isinstance(inner.shape, tuple):
        raise error("tile_to_shape needs a layout of rank >= 1 as its atom")
    shape = _tuple(shape, error)
    if not isinstance(shape, tuple) or len(shape) < len(inner.shape):
        raise error(f"tile_to_shape needs a shape of at least the atom's rank {len(inner.shape)}")
    padded = len(shape) - len(inner.shape)  # CuTe's append<R>: size-1 modes, stride 0
    inner = Layout(inner.shape + (1,) * padded, inner.stride + (0,) * padded)
    reps = []
    for have, want in zip(inner.shape, shape):
        a, w = size(have), size(want)
        if a < 1 or w < 1:
            raise error("tile_to_shape: sizes must be at least 1")
        if w % a:
            raise error(f"tile_to_shape: {w} is not a multiple of the atom's {a}")
        reps.append(w // a)
    right = isinstance(order, Tag) and order.name in ("LayoutRight", "GenRowMajor")
    rep_strides = compact(tuple(reps), right)
    span = cosize(inner)
    rank = len(inner.shape) - padded
    new_shape = tuple((s, r) if i < rank else r for i, (s, r) in enumerate(zip(inner.shape, reps)))
    new_stride = tuple(
        (d, rs * span if r > 1 else 0) if i < rank else (rs * span if r > 1 else 0)
        for i, (d, rs, r) in enumerate(zip(inner.stride, rep_strides, reps))
    )
    out = Layout(new_shape, new_stride)
    return Composed(atom.swizzle, atom.offset, atom.ptr_bits, out) if isinstance(atom, Composed) else out


def cosize(layout: Layout) -> int:
    """One past the largest offset the layout reaches."""
    return 1 + sum((s - 1) * abs(d) for s, d in zip(leaves(layout.shape), leaves(layout.stride)))
