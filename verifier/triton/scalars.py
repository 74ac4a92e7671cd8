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
    "addi": lambda a, b: a + b, "subi": lambda a, b: a - b, "muli": lambda a, b: a * b,
    "divsi": lambda a, b: _trunc_div(a, b) if b else None, "divui": lambda a, b: a // b if b else None,
    "ceildivsi": lambda a, b: -(-a // b) if b else None,
    "remsi": lambda a, b: a - _trunc_div(a, b) * b if b else None,
    "remui": lambda a, b: a % b if b else None,
    "maxsi": max, "minsi": min, "maxui": max, "minui": min,
    "andi": lambda a, b: a & b, "ori": lambda a, b: a | b, "xori": lambda a, b: a ^ b,
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
        op, a, b = defs[v]
        if op not in INT_OPS:
            return None
        x, y = value(a, args, defs, depth + 1), value(b, args, defs, depth + 1)
        return None if x is None or y is None else _fits(INT_OPS[op](x, y))
    return None


def text(v: str, defs: dict, depth: int = 0) -> str:
    """``v`` written as the kernel's expression (``cdiv(K, 64)``, ``(M % 64) == 0``)."""
    if v in defs and depth < 8:
        op, a, b = defs[v]
        if op == "load":
            return f"load({text(a, defs, depth + 1)})"
        if op in _CALLS:
            return f"{_CALLS[op]}({text(a, defs, depth + 1)}, {text(b, defs, depth + 1)})"
        if op in _TEXT:
            x, y = text(a, defs, depth + 1), text(b, defs, depth + 1)
            x = f"({x})" if a in defs and defs[a][0] in _TEXT else x
            y = f"({y})" if b in defs and defs[b][0] in _TEXT else y
            return f"{x} {_TEXT[op]} {y}"
    return v.lstrip("%").replace("_i32", "").replace("_i64", "") if v.startswith("%c") and v[2:3].isdigit() \
        else v.lstrip("%")


def unknown_why(v: str, args: dict[str, int] | None, defs: dict, depth: int = 0) -> str | None:
    """Why ``v`` is not decided: the first value it rests on that nothing gives."""
    if value(v, args, defs) is not None:
        return None
    if v in defs and depth < 32:
        op, a, b = defs[v]
        if op == "load":
            return f"{text(v, defs)} is loaded from memory at run time"
        for x in (a, b):
            why = unknown_why(x, args, defs, depth + 1)
            if why:
                return why
        return f"{text(v, defs)} is not an integer bankproof evaluates"
    name = v.lstrip("%")
    if name.startswith(("program_id_", "num_programs_")):
        return f"{name} is not given (--arg {name}=N)"
    return f"argument {name} is not given (--arg {name}=N)"


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
