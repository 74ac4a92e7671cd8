"""The TTGIR's scalar integer arithmetic, evaluated from what is given: constants, the kernel's
arguments (``--arg K=4096``) and the launch (``program_id_x``, ``num_programs_x``, ...); and the
conditions of its ``scf.if`` arms and ``cf.cond_br`` blocks (an early ``return``), decided from the
same, or named when they cannot be (a value loaded from memory, an argument not given).

``defs`` maps an SSA name to ``(op, a, b)``: an ``arith`` op (``addi``, ``minsi``, ``ceildivsi``,
``cmpi_slt``, ...), ``("arg", name, "")`` for a launch value, ``("load", ptr, "")`` for ``tt.load``.

>>> defs = {"%0": ("remsi", "%M", "64"), "%1": ("cmpi_eq", "%0", "0")}
>>> c = Cond("%1", True, defs)
>>> c.decide({"M": 128}), c.decide({"M": 100}), c.decide({}), c.text()
(True, False, None, '(M % 64) == 0')
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, exactly (MLIR's divsi), at any size."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _fits(v: int | None) -> int | None:
    """``v`` when it is a 64-bit value, else unknown (a constant that big is not a trip count)."""
    return v if v is not None and -(1 << 63) <= v < 1 << 63 else None


_CMP = {"eq": int.__eq__, "ne": int.__ne__, "slt": int.__lt__, "sle": int.__le__, "sgt": int.__gt__,
        "sge": int.__ge__, "ult": int.__lt__, "ule": int.__le__, "ugt": int.__gt__,
        "uge": int.__ge__}  # fmt: skip
_CMP_TEXT = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<",
             "ule": "<=", "ugt": ">", "uge": ">="}  # fmt: skip


def _compare(f):
    return lambda a, b: int(f(a, b))


INT_OPS = {
    "addi": lambda a, b: a + b,
    "subi": lambda a, b: a - b,
    "muli": lambda a, b: a * b,
    "divsi": lambda a, b: _trunc_div(a, b) if b else None,
    "divui": lambda a, b: a // b if b else None,
    "ceildivsi": lambda a, b: -(-a // b) if b else None,
    "remsi": lambda a, b: a - _trunc_div(a, b) * b if b else None,
    "remui": lambda a, b: a % b if b else None,
    "maxsi": max,
    "minsi": min,
    "maxui": max,
    "minui": min,
    "andi": lambda a, b: a & b,
    "ori": lambda a, b: a | b,
    "xori": lambda a, b: a ^ b,
    "shli": lambda a, b: a << b if 0 <= b < 64 else None,
    "shrsi": lambda a, b: a >> b if 0 <= b < 64 else None,
    **{f"cmpi_{k}": _compare(f) for k, f in _CMP.items()},
}  # fmt: skip  (results beyond 64 bits are unknown: see _fits)
_TEXT = {"addi": "+", "subi": "-", "muli": "*", "divsi": "/", "divui": "/", "remsi": "%", "remui": "%",
         "andi": "&", "ori": "|", "xori": "^", "shli": "<<", "shrsi": ">>",
         **{f"cmpi_{k}": v for k, v in _CMP_TEXT.items()}}  # fmt: skip
_CALLS = {"maxsi": "max", "minsi": "min", "maxui": "max", "minui": "min", "ceildivsi": "cdiv"}


def value(v: str, args: dict[str, int] | None, defs: dict, depth: int = 0) -> int | None:
    """``v`` (an integer literal or SSA name) from ``args`` and ``defs``; None when not decided."""
    if v.lstrip("-").isdigit():
        return int(v)
    name = v.lstrip("%")
    if args and name in args:
        return int(args[name])
    if v in defs and depth < 32:
        op, a, b, *rest = defs[v]
        if op == "load":  # what the buffer holds, where given: fill_<pointer argument>
            root = pointer_arg(a, defs)
            return int(args[f"fill_{root}"]) if args and root and f"fill_{root}" in args else None
        if op == "select":  # (select, cond, if true, if false)
            c = value(a, args, defs, depth + 1)
            return None if c is None else value(b if c & 1 else rest[0], args, defs, depth + 1)
        if op not in INT_OPS:
            return None
        x, y = value(a, args, defs, depth + 1), value(b, args, defs, depth + 1)
        return None if x is None or y is None else _fits(INT_OPS[op](x, y))
    return None


def pointer_arg(v: str, defs: dict, depth: int = 0) -> str | None:
    """The kernel argument a scalar pointer is offset from (``tt.addptr`` chains), or None.

    >>> pointer_arg("%p", {"%p": ("addptr", "%q", "%b"), "%q": ("arg", "seq_ptr", "")})
    'seq_ptr'
    """
    d = defs.get(v)
    if d is None or depth > 32:
        return None
    if d[0] == "arg":
        return d[1]
    return pointer_arg(d[1], defs, depth + 1) if d[0] == "addptr" else None


def text(v: str, defs: dict, depth: int = 0) -> str:
    """``v`` written as the kernel's expression (``cdiv(K, 64)``, ``(M % 64) == 0``)."""
    if v in defs and depth < 8:
        op, a, b, *rest = defs[v]
        if op == "addi" and b == "0":  # a launch value: program_id_x
            return text(a, defs, depth + 1)
        if op == "select":
            c, x, y = (text(t, defs, depth + 1) for t in (a, b, rest[0]))
            return f"({c} ? {x} : {y})"
        if op == "load":
            return f"load({text(a, defs, depth + 1)})"
        if op == "addptr":
            return f"{text(a, defs, depth + 1)} + {text(b, defs, depth + 1)}"
        if op in _CALLS:
            return f"{_CALLS[op]}({text(a, defs, depth + 1)}, {text(b, defs, depth + 1)})"
        if op in _TEXT:
            x, y = text(a, defs, depth + 1), text(b, defs, depth + 1)
            x = f"({x})" if _compound(a, defs) else x
            y = f"({y})" if _compound(b, defs) else y
            return f"{x} {_TEXT[op]} {y}"
    return (
        v.lstrip("%").replace("_i32", "").replace("_i64", "")
        if v.startswith("%c") and v[2:3].isdigit()
        else v.lstrip("%")
    )


def _compound(v: str, defs: dict) -> bool:
    """Whether ``v`` prints as an infix expression (then it is parenthesized inside another)."""
    d = defs.get(v)
    return bool(d) and d[0] in _TEXT and not (d[0] == "addi" and d[2] == "0")


def unknown_why(v: str, args: dict[str, int] | None, defs: dict, depth: int = 0) -> str | None:
    """Why ``v`` is not decided: the first value it rests on that nothing gives."""
    if value(v, args, defs) is not None:
        return None
    name = v.lstrip("%")
    if name.startswith(("program_id_", "num_programs_")):
        return f"{name} is not given (--arg {name}=N)"
    if v in defs and depth < 32:
        op, a, b, *rest = defs[v]
        if op == "arg":
            return f"argument {a} is not given (--arg {a}=N)"
        if op == "load":
            root = pointer_arg(a, defs)
            hint = (
                f" (--buffer {root}=FILE.npy with the launch's integer arguments, or --arg fill_{root}=N: "
                "what its buffer holds)"
                if root
                else ""
            )
            return f"{text(v, defs)} is loaded from memory at run time{hint}"
        for x in (a, b, *rest):
            why = unknown_why(x, args, defs, depth + 1)
            if why:
                return why
        return f"{text(v, defs)} is not an integer bankproof evaluates"
    return f"{name} is a run-time value (carried around a loop or computed from tensors)"


@dataclass(frozen=True)
class Cond:
    """One arm of a branch: the ``i1`` SSA value ``name`` is ``arm`` (True: the ``then`` region or
    the first ``cf.cond_br`` target)."""

    name: str
    arm: bool
    defs: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def decide(self, args: dict[str, int] | None) -> bool | None:
        """Whether this arm runs, from ``args``; None when it cannot be decided."""
        v = value(self.name, args, self.defs)
        return None if v is None else bool(v & 1) == self.arm

    def text(self) -> str:
        t = text(self.name, self.defs)
        return t if self.arm else f"not ({t})"

    def why(self, args: dict[str, int] | None) -> str | None:
        return unknown_why(self.name, args, self.defs)


LOOP_STEPS = 1 << 16  # the most iterations a loop's carried scalars are followed for


def loop_hits(cond: Cond, carried: dict, trips: int, args: dict[str, int] | None) -> tuple[int, str] | None:
    """How many of a loop's ``trips`` iterations ``cond``'s arm runs in, following the scalars the
    loop carries (``carried``: SSA name -> (initial value, value yielded)) iteration by iteration:
    a flattened persistent loop's counter ``k = (k == B ? 0 : k + 1)`` and the epilogue's test of it
    (or of a copy delayed by an iteration) run once per tile. None when the condition rests on
    anything else not known, or the loop is longer than :data:`LOOP_STEPS`.

    >>> d = {"%b": ("subi", "%kt", "1"), "%e": ("cmpi_eq", "%k", "%b"), "%n": ("addi", "%k", "1"),
    ...      "%x": ("select", "%e", "0", "%n"), "%c": ("cmpi_eq", "%x", "%b"), "%kt": ("arg", "kt", "")}
    >>> loop_hits(Cond("%c", True, d), {"%k": ("-1", "%x")}, 12, {"kt": 4})[0]
    3
    """
    if trips > LOOP_STEPS or not carried:
        return None
    env = dict(args or {})
    cur = {n: value(init, env, cond.defs) for n, (init, _) in carried.items()}
    hits = 0
    for _ in range(trips):
        for n, v in cur.items():  # a value not known this iteration must not stay from the last
            if v is None:
                env.pop(n.lstrip("%"), None)
            else:
                env[n.lstrip("%")] = v
        d = cond.decide(env)
        if d is None:
            return None
        hits += d
        cur = {n: value(y, env, cond.defs) if y else None for n, (_, y) in carried.items()}
    return hits, f"{cond.text()} on {hits} of {trips} iterations (the loop's carried values followed)"
