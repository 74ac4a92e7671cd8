"""CuTe DSL layout objects (``cutlass.cute``), read by their fields: a ``Layout``'s ``shape`` and
``stride`` (nested tuples of integers, as the DSL holds them while a ``@cute.jit`` function is
traced), a ``ComposedLayout``'s ``inner`` swizzle (``num_bits``, ``num_base``, ``num_shift``),
``offset`` and ``outer`` layout, written as the CuTe notation bankproof parses (``S<B,M,S> o off o
(shape):(stride)``). Nothing of the DSL is imported here: objects are known by their class's
module and name. A field the DSL holds as a run-time value (a dynamic stride) is refused, naming it.

>>> class _Layout:  # stands in for the DSL's class of that name
...     shape, stride = (8, (2, 4)), (1, (8, 16))
>>> _Layout.__module__ = "cutlass.cute.core"
>>> is_cute_dsl(_Layout()), cute_dsl_text(_Layout())
(True, 'cute:(8,(2,4)):(1,(8,16))')
"""

from __future__ import annotations

from bankproof.models.errors import InputError

WHERE = "cute dsl"
MAX_DEPTH = 8


def is_cute_dsl(obj: object) -> bool:
    """Whether ``obj`` is a CuTe DSL object (judged by its class's module; no import)."""
    return type(obj).__module__.split(".")[0] == "cutlass"


def _tuple(v: object, field: str, depth: int = 0) -> str:
    """A shape or stride as CuTe writes it: ``8``, ``(8,(2,4))``."""
    if isinstance(v, bool):
        raise InputError(WHERE, field, "must hold integers", v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, tuple) and v and depth < MAX_DEPTH:
        return "(" + ",".join(_tuple(x, field, depth + 1) for x in v) + ")"
    raise InputError(WHERE, field, "must be static integers (a value known when the function is traced)",
                     type(v).__name__)  # fmt: skip


def _int(obj: object, name: str, cls: str) -> int:
    v = getattr(obj, name, None)
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(WHERE, f"{cls}.{name}", "must be a static integer", type(v).__name__)
    return v


def _layout(obj: object, cls: str) -> str:
    return f"{_tuple(obj.shape, cls + '.shape')}:{_tuple(obj.stride, cls + '.stride')}"


def cute_dsl_text(obj: object) -> str:
    """The CuTe notation of a DSL ``Layout`` or swizzled ``ComposedLayout``, from its fields."""
    cls = type(obj).__name__.lstrip("_")
    if hasattr(obj, "inner") and hasattr(obj, "outer"):  # a ComposedLayout
        inner, outer = obj.inner, obj.outer
        if not hasattr(inner, "num_bits"):
            raise InputError(WHERE, f"{cls}.inner", "must be a Swizzle (a layout composed with a layout "
                             "is not read)", type(inner).__name__)  # fmt: skip
        sw = f"S<{_int(inner, 'num_bits', 'Swizzle')},{_int(inner, 'num_base', 'Swizzle')}," \
             f"{_int(inner, 'num_shift', 'Swizzle')}>"  # fmt: skip
        return f"cute:{sw} o {_int(obj, 'offset', cls)} o {_layout(outer, 'Layout')}"
    if hasattr(obj, "shape") and hasattr(obj, "stride"):
        return f"cute:{_layout(obj, cls)}"
    raise InputError(WHERE, "layout", "must be a CuTe DSL Layout or ComposedLayout", cls)


__all__ = ["cute_dsl_text", "is_cute_dsl"]
