"""Closed-form offset formulas: ``32*m + (n ^ (2*m))``, parsed and printed.

A formula names the tensor dims (in shape order) and combines them with ``+ - * // % ^ & | << >>``
and integer constants. Parsing is done on Python's syntax tree, never by ``eval``; the formula is
evaluated for every coordinate and must be an F2-linear bijection onto ``[0, size)``.

>>> L = parse_formula("32*m + (n ^ (2*m))", ["m", "n"], [16, 32])
>>> L.as_dict()["offset"][5:]
[[1, 2], [2, 4], [4, 8], [8, 16]]
>>> formula_text(L, ["m", "n"])
'32*m + (n ^ (2*m))'
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence

import numpy as np
from bankproof.models.errors import InputError, is_pow2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import layout_from_offsets

_OPS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.BitXor: np.bitwise_xor,
    ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or,
    ast.LShift: np.left_shift,
    ast.RShift: np.right_shift,
}
_MAX_LEN = 2000
LIMIT = 1 << 40  # the largest magnitude of a constant or an intermediate value
BEYOND = "has a value beyond 2^40 (64-bit arithmetic would wrap)"


def default_names(rank: int) -> list[str]:
    """Dim names when the user gives none: ``m, n`` for 2-D, ``b, m, n`` for 3-D.

    >>> default_names(2), default_names(4)
    (['m', 'n'], ['dim0', 'dim1', 'dim2', 'dim3'])
    """
    return {1: ["i"], 2: ["m", "n"], 3: ["b", "m", "n"]}.get(rank, [f"dim{i}" for i in range(rank)])


def evaluate(text: str, names: Sequence[str], shape: Sequence[int]) -> np.ndarray:
    """The formula's offset at every coordinate, as an array of ``shape``."""
    if len(text) > _MAX_LEN:
        raise InputError("formula", "text", f"is too long (limit {_MAX_LEN} characters)", len(text))
    try:
        with warnings.catch_warnings():  # Python warns on text like "2x"; the error below is enough
            warnings.simplefilter("ignore")
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise InputError(
            "formula", "text", f"is not a valid expression ({e.msg} at column {e.offset})", text
        ) from None
    except (RecursionError, MemoryError, ValueError):
        raise InputError("formula", "text", "is nested too deeply to read", text) from None
    # sparse grids: each dim's coordinates broadcast, never a full grid per dim
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in shape], indexing="ij", sparse=True)
    env = dict(zip(names, grids))
    out = np.broadcast_to(_evaluate(tree.body, env, names), tuple(shape)).astype(np.int64)
    return np.ascontiguousarray(out)


def _leaf(node: ast.AST, env: dict, names: Sequence[str]) -> np.ndarray:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        if abs(node.value) > LIMIT:
            raise InputError("formula", "constant", "is too large (limit 2^40)", node.value)
        return np.int64(node.value)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise InputError("formula", "name", f"is not a dim (dims: {', '.join(names)})", node.id)
        return env[node.id]
    raise InputError("formula", "text", "may only use dim names, integers and + - * // % ^ & | << >>",
                     _text(node))  # fmt: skip


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError):
        return type(node).__name__


def _evaluate(root: ast.AST, env: dict, names: Sequence[str]) -> np.ndarray:
    """The tree's value at every coordinate, evaluated without recursion (a sum of a thousand
    terms is a thousand deep); every intermediate value must stay within 2^40 in magnitude, so
    64-bit arithmetic never wraps."""
    stack: list[tuple[ast.AST, bool]] = [(root, False)]
    values: list[np.ndarray] = []
    while stack:
        node, ready = stack.pop()
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            if not ready:
                stack += [(node, True), (node.right, False), (node.left, False)]
                continue
            b, a = values.pop(), values.pop()
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and np.any(b == 0):
                raise InputError("formula", "text", "divides by zero", _text(node))
            if isinstance(node.op, (ast.LShift, ast.RShift)) and (np.any(b < 0) or np.any(b > 40)):
                raise InputError("formula", "text", "shifts by a negative or huge amount", _text(node))
            if isinstance(node.op, (ast.Mult, ast.LShift)):  # up to 2^80: bound it before int64 wraps
                scale = np.exp2(b) if isinstance(node.op, ast.LShift) else np.asarray(b, dtype=np.float64)
                if np.any(np.abs(np.asarray(a, dtype=np.float64) * scale) > LIMIT):
                    raise InputError("formula", "text", BEYOND, _text(node))
            out = _OPS[type(node.op)](a, b)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if not ready:
                stack += [(node, True), (node.operand, False)]
                continue
            out = -values.pop()
        else:
            out = _leaf(node, env, names)
        if np.any(np.abs(out) > LIMIT):
            raise InputError("formula", "text", BEYOND, _text(node))
        values.append(out)
    return values[0]


def parse_formula(text: str, names: Sequence[str], shape: Sequence[int]) -> LinearLayout:
    """The memory layout ``offset -> dims`` of a formula over dims ``names`` of ``shape``."""
    if len(names) != len(shape):
        raise InputError(
            "formula", "dims", f"must name {len(shape)} dims (one per shape entry)", ",".join(names)
        )
    for s in shape:
        if not is_pow2(s):
            raise InputError("formula", "shape", "sizes must be powers of two", s)
    return layout_from_offsets(evaluate(text, names, shape), "formula")


def formula_text(layout: LinearLayout, names: Sequence[str]) -> str:
    """Print a linear memory layout as a formula: XOR-free parts joined by ``+``, overlapping
    parts XORed in parentheses, each part a shifted and masked dim."""
    inv = layout.invert()  # dims -> offset
    terms = []  # (low output bit, -dim index, high output bit, text): ties put faster dims first
    for k, ((_, bases), name) in enumerate(zip(inv.bases, names)):
        by_shift: dict[int, int] = {}
        for i, b in enumerate(bases):
            img = b[0]
            j = 0
            while img:
                if img & 1:
                    by_shift[j - i] = by_shift.get(j - i, 0) | (1 << i)
                img >>= 1
                j += 1
        nbits = len(bases)
        for shift, mask in sorted(by_shift.items()):
            for lo, hi in _runs(mask):
                terms.append((lo + shift, -k, hi + shift, _term(name, lo, hi, nbits, shift)))
    if not terms:
        return "0"
    terms.sort()
    groups: list[list[tuple[int, int, int, str]]] = []
    for t in terms:
        if groups and t[0] < max(x[2] for x in groups[-1]):
            groups[-1].append(t)
        else:
            groups.append([t])
    parts = []
    for g in reversed(groups):
        if len(g) == 1:
            parts.append(g[0][3])
        else:
            parts.append("(" + " ^ ".join(_atom(t[3]) for t in g) + ")")
    return " + ".join(parts)


def _runs(mask: int) -> list[tuple[int, int]]:
    """Maximal runs of set bits as [lo, hi) pairs."""
    out, i = [], 0
    while mask >> i:
        if (mask >> i) & 1:
            j = i
            while (mask >> j) & 1:
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def _term(name: str, lo: int, hi: int, nbits: int, shift: int) -> str:
    """Bits [lo, hi) of ``name``, moved by ``shift``: e.g. ``2*m``, ``(n // 4) % 2``."""
    expr = name
    if lo > 0:
        expr = f"({expr} // {1 << lo})"
    if hi < nbits:
        expr = f"{expr} % {1 << (hi - lo)}"
    place = lo + shift
    if place > 0:
        expr = f"{1 << place}*{_atom(expr)}"
    elif place < 0:
        raise AssertionError("bits never move below 0")
    return expr


def _atom(expr: str) -> str:
    return (
        expr
        if expr.isidentifier() or expr.isdigit() or (expr.startswith("(") and _balanced(expr))
        else f"({expr})"
    )


def _balanced(expr: str) -> bool:
    depth = 0
    for i, ch in enumerate(expr):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(expr) - 1:
            return False
    return True
