"""numba's names for a kernel's ``cuda.shared.array`` allocations (``_cudapy_smem_1``, ``_2``, ...
in the order the function declares them), mapped back to the Python variables they are bound to,
so a fix names ``tile`` rather than numba's symbol. A name is given only where the function's
source, read without running any of it (literal shapes, module-level integer names, numba types),
declares as many arrays as the PTX has, each of the byte size of the PTX symbol in its place.

>>> def k(a):
...     tile = cuda.shared.array((32, 33), float32)
>>> arrays(k, {"cuda": None, "float32": _Type(32)})
[('tile', 4224)]
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Mapping

NUMBA_SMEM = re.compile(r"_cudapy_smem_\d+")


class _Type:  # stands in for a numba type in the doctest: its bit width
    def __init__(self, bitwidth: int):
        self.bitwidth = bitwidth


def _int(node: ast.AST, names: Mapping) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        v = names.get(node.id)
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    return None


def _elements(node: ast.AST, names: Mapping) -> int | None:
    dims = node.elts if isinstance(node, ast.Tuple) else [node]
    n = 1
    for d in dims:
        v = _int(d, names)
        if v is None or v <= 0:
            return None
        n *= v
    return n


def _is_shared_array(call: ast.AST) -> bool:
    """``cuda.shared.array(...)`` (any name for the module)."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return False
    f = call.func
    return f.attr == "array" and isinstance(f.value, ast.Attribute) and f.value.attr == "shared"


def arrays(fn, names: Mapping | None = None) -> list[tuple[str, int]] | None:
    """``(variable, bytes)`` of each ``X = cuda.shared.array(shape, dtype)`` of ``fn``, in source
    order, or ``None`` where one cannot be read without running code."""
    names = dict(getattr(fn, "__globals__", {})) if names is None else names
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    out = []
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        call = node.value
        if not _is_shared_array(call):
            continue
        kw = {k.arg: k.value for k in call.keywords}
        shape = call.args[0] if call.args else kw.get("shape")
        dtype = call.args[1] if len(call.args) > 1 else kw.get("dtype")
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) or shape is None:
            return None
        n = _elements(shape, names)
        width = getattr(names.get(dtype.id), "bitwidth", None) if isinstance(dtype, ast.Name) else None
        if n is None or not isinstance(width, int):
            return None
        out.append((node.targets[0].id, n * width // 8))
    return out


def rename(fn, symbols: list[tuple[str, int | None]]) -> dict[str, str]:
    """numba's symbol -> the variable, where every one is vouched for (see the module docstring);
    ``symbols``: the PTX's shared symbols ``(name, bytes)`` in order."""
    ours = [(s, b) for s, b in symbols if NUMBA_SMEM.fullmatch(s)]
    declared = arrays(fn)
    if not ours or declared is None or len(declared) != len(ours):
        return {}
    ours.sort(key=lambda sb: int(sb[0].rsplit("_", 1)[1]))
    if any(b != size for (_, b), (_, size) in zip(ours, declared, strict=True)):
        return {}
    return {s: var for (s, _), (var, _) in zip(ours, declared, strict=True)}


__all__ = ["arrays", "rename"]
