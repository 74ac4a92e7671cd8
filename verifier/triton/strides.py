"""How far apart in global memory a pointer tensor's neighbouring elements are, read from the
TTGIR that builds it: per dim, the element stride when it is a constant (``tt.make_range`` scaled
and summed by constants), ``None`` where it rests on a runtime value (a stride argument) or on an
op this reader does not follow. The question it answers for a ``cp.async``: is its contiguous dim
(``order[0]``) really contiguous in global memory, or may each lane's element lie on its own
128-byte line (a transposed or sliced view passed with a runtime stride)?

Followed: ``tt.make_range``, ``tt.splat``, constants, ``tt.expand_dims``, ``tt.broadcast``,
``ttg.convert_layout``, integer casts, ``arith.addi``/``subi``/``muli``/``shli``, ``tt.addptr``,
``tt.trans``, and loop-carried values whose loop yields them with the same strides (checked by
induction: assumed on entry, recomputed from the yield, kept only when equal).

>>> defs = {"%r": "%r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #b>",
...         "%s": "%s = tt.splat %n : i32 -> tensor<32xi32, #b>",
...         "%o": "%o = arith.muli %r, %s : tensor<32xi32, #b>",
...         "%p0": "%p0 = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>, #b>",
...         "%p": "%p = tt.addptr %p0, %o : tensor<32x!tt.ptr<f32>, #b>, tensor<32xi32, #b>"}
>>> element_strides(defs, {}, "%p"), element_strides(defs, {}, "%o"), element_strides(defs, {}, "%r")
((None,), (None,), (1,))
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bankproof.verifier.triton.ttgir import find_types

Strides = tuple  # per dim: an int, or None when not a known constant
MAX_DEPTH = 200  # def chains followed at most this deep
MAX_STEPS = 20_000  # values looked up per question, at most (past it: not followed)

_AFFINE = (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.shli",
    "arith.constant",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
)
_NAME = re.compile(r"%[\w$.#-]+")
_INT = re.compile(r"arith\.constant\s+(?:dense<)?(-?\d{1,18})>?\s*:\s*(?:tensor<)?[\dx]*i\d+")


class _Tracer:
    def __init__(self, defs: Mapping[str, str], yields: Mapping[str, str], block_args: Mapping[str, str],
                 scalars: frozenset[str] = frozenset(), budget: list[int] | None = None):  # fmt: skip
        self.defs, self.yields, self.block_args, self.scalars = defs, yields, block_args, scalars
        self.memo: dict[str, Strides | None] = {}
        self.budget = budget if budget is not None else [MAX_STEPS]  # shared by the loop hypotheses

    def constant(self, name: str) -> int | None:
        """The value of a uniform integer constant (scalar or splat/dense), else ``None``."""
        line = self.defs.get(name, "")
        m = _INT.search(line)
        if m and " = arith.constant " in line:
            return int(m.group(1))
        if " = tt.splat " in line:
            ops = _NAME.findall(line.split("tt.splat", 1)[1].split(" : ", 1)[0])
            return self.constant(ops[0]) if ops else None
        return None

    def strides(self, name: str, depth: int = 0) -> Strides | None:
        if name in self.memo:
            return self.memo[name]
        self.budget[0] -= 1
        if depth > MAX_DEPTH or self.budget[0] < 0:
            return None
        if name not in self.defs and name in self.block_args:
            return self._carried(name, depth)
        if name not in self.defs:
            return () if name in self.scalars else None  # a kernel argument is a uniform scalar
        line = self.defs[name]
        out = self._op(line, depth)
        if out is None:
            out = self._opaque(_rank(line))
        self.memo[name] = out
        return out

    def _carried(self, name: str, depth: int) -> Strides | None:
        """A loop-carried value: the initial value's strides, kept when the yield keeps them."""
        init = self.strides(self.block_args[name], depth + 1)
        kept = False
        if init is not None and name in self.yields:
            again = _Tracer(
                self.defs, self.yields, self.block_args, self.scalars, self.budget
            )  # its memo holds the hypothesis
            again.memo = {name: init}
            kept = again.strides(self.yields[name], depth + 1) == init
        self.memo[name] = init if kept else None
        return self.memo[name]

    def _op(self, line: str, depth: int) -> Strides | None:
        m = re.match(r"\s*%[\w$.#-]+\s*=\s*([a-z_]+\.[a-z_.]+)\s*(.*)$", line)
        if not m:
            return None
        op, rest = m.group(1), m.group(2)
        head = rest.split(" : ", 1)[0]
        args = _NAME.findall(head.split("{", 1)[0] if op == "tt.expand_dims" else head)
        rank = _rank(line)
        if op == "tt.make_range":
            return (1,)
        if op in ("tt.splat", "arith.constant", "tt.get_program_id") and rank is not None:
            return (0,) * rank
        elementwise = op in ("tt.load", "arith.select") or op.startswith("math.") or op.startswith("arith.")
        if elementwise and op not in _AFFINE and 1 <= len(args) <= 4:
            return _uniform_where_all_are([self.strides(a, depth + 1) for a in args], rank)
        sub = [self.strides(a, depth + 1) for a in args[:2]]
        if not sub or any(s is None for s in sub):
            return None
        if op in ("tt.broadcast", "ttg.convert_layout", "arith.extsi", "arith.extui", "arith.trunci"):
            return sub[0]
        if op == "tt.expand_dims":
            axis = re.search(r"axis\s*=\s*(\d+)", rest)
            return (
                None if axis is None else sub[0][: int(axis.group(1))] + (0,) + sub[0][int(axis.group(1)) :]
            )
        if op == "tt.trans":
            order = re.search(r"order\s*=\s*array<i32:\s*([\d,\s]+)>", rest)
            perm = [int(x) for x in order.group(1).split(",")] if order else []
            return tuple(sub[0][p] for p in perm) if sorted(perm) == list(range(len(sub[0]))) else None
        if len(sub) < 2:
            return None
        a, b = _align(sub[0], sub[1])
        if op in ("arith.addi", "tt.addptr", "arith.subi") and len(a) == len(b):
            sign = -1 if op == "arith.subi" else 1
            return tuple(None if x is None or y is None else x + sign * y for x, y in zip(a, b))
        if op in ("arith.muli", "arith.shli") and len(a) == len(b):
            return self._scaled(op, args, a, b)
        return None

    def _opaque(self, rank: int | None) -> Strides | None:
        """An op this reader does not follow: a scalar is uniform; a tensor unknown along every dim."""
        return None if rank is None else (None,) * rank

    def _scaled(self, op: str, args: list[str], a: Strides, b: Strides) -> Strides | None:
        """A product (or left shift) by a uniform value: strides scaled by its constant, or unknown
        where they are not zero and the value is a runtime one."""
        if any(x != 0 for x in b) and op == "arith.muli" and all(x == 0 for x in a):
            a, b, args = b, a, args[::-1]
        if any(x != 0 for x in b):
            return None
        k = self.constant(args[1])
        if k is not None and op == "arith.shli":
            k = 1 << k if 0 <= k < 62 else None
        return tuple(0 if x == 0 else (x * k if x is not None and k is not None else None) for x in a)


def _uniform_where_all_are(sub: list[Strides | None], rank: int | None) -> Strides | None:
    """Any other elementwise op (``remsi``, ``select``, ``andi``, a ``tt.load`` of a pointer
    tensor): constant along a dim where every operand is, otherwise unknown there."""
    if any(s is None for s in sub) or rank is None:
        return None
    full = [s if s else (0,) * rank for s in sub]  # a scalar operand is uniform
    if any(len(s) != rank for s in full):
        return None
    return tuple(0 if all(s[d] == 0 for s in full) else None for d in range(rank))


_TENSOR_DIMS = re.compile(r"\btensor<((?:\d+x)*)")  # ``tensor<64x128xf16``: its dims, each with an 'x'


def _rank(line: str) -> int | None:
    """The rank of an op's result: 0 for a scalar, ``None`` for what is not an integer or pointer
    value (a memdesc, a token, an unreadable type)."""
    body = line.split(" loc(", 1)[0]
    result = body.rsplit("->", 1)[1] if "->" in body else body.rsplit(" : ", 1)[-1]
    if "memdesc" in result or "token" in result:
        return None
    head = _TENSOR_DIMS.search(result)
    if head and head.start() == result.find("<") - len("tensor"):  # the first type is a tensor's
        return head.group(1).count("x")
    tensors = find_types(result)
    if tensors:
        return len(tensors[0].shape)
    return 0 if " : " in body else None


def _align(a: Strides, b: Strides) -> tuple[Strides, Strides]:
    """Uniform scalars (rank 0) meet tensors: a scalar's strides are zeros of the other's rank."""
    if not a and b:
        return (0,) * len(b), b
    if not b and a:
        return a, (0,) * len(a)
    return a, b


def element_strides(
    defs: Mapping[str, str],
    yields: Mapping[str, str],
    value: str,
    block_args: Mapping[str, str] | None = None,
    scalars: frozenset[str] = frozenset(),
) -> Strides | None:
    """Per dim of ``value`` (a pointer or integer tensor), its element stride when constant, else
    ``None`` for that dim; ``None`` when the value's definition cannot be found at all.
    ``scalars``: the kernel's arguments (uniform)."""
    return _Tracer(defs, yields, block_args or {}, scalars).strides(value)


def module_strides(mod, value: str) -> Strides | None:
    """:func:`element_strides` of a value of a read module (:class:`~.ttgir.Module`)."""
    return element_strides(mod.defs, mod.yields, value, mod.block_args, frozenset(mod.func_args))
