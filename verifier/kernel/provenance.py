"""What an unknown value depends on, so that an ``unknown`` names what would decide it: the
buffer a load read (and the flag that gives it), the argument an ``ld.param`` read, or, through
arithmetic, whatever the first unknown source depended on. The machine keeps one phrase per
register (``Machine.why``); a branch, a switch or a shared-memory address that is not known says
its register's phrase.

>>> from types import SimpleNamespace
>>> m = SimpleNamespace(why={"%r1": "the buffer lens (not given: --buffer lens=FILE.npy)"},
...                     reg_name=lambda name, op: name)
>>> op = SimpleNamespace(operands=("%r2", "%r1", "4"), guard=None)
>>> depends(m, op, 1)
'the buffer lens (not given: --buffer lens=FILE.npy)'
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.kernel.buffers import load_width
from bankproof.verifier.kernel.values import Value
from bankproof.verifier.ptx.module import Op

_REGS = re.compile(r"%[\w$]+")
PARAM_REF = re.compile(r"\[\s*([\w$]+)\s*(?:\+\s*(\d{1,6}))?\s*\]")  # ``[name+8]``: a parameter and offset


def of(machine, register: str, op: Op) -> str:
    """The phrase of one register ("" when none is kept)."""
    return machine.why.get(machine.reg_name(register, op), "")


def depends(machine, op: Op, first: int = 0) -> str:
    """What the first unknown source (from operand ``first``) or guard of ``op`` depends on."""
    regs = [r for o in op.operands[first:] for r in _REGS.findall(o)]
    if op.guard is not None:
        regs.append(op.guard[1])
    return next((w for r in regs if (w := of(machine, r, op))), "")


def note(machine, dest: str, op: Op, where: np.ndarray, why: str | None, first: int) -> None:
    """After ``op`` wrote ``dest`` in the threads of ``where``: its phrase (``why``, else its
    sources'), or none where it is known in all of them."""
    name = machine.reg_name(dest, op)
    if machine.regs[name].k[where].all():
        machine.why.pop(name, None)
        return
    got = why or depends(machine, op, first) or machine.why.get(name, "")
    if got:
        machine.why[name] = got
    else:
        machine.why.pop(name, None)


def unevaluated(op: Op) -> str:
    """The phrase of a result the machine does not compute from known sources."""
    return f"{op.opcode} (PTX line {op.ptx_line}), which the machine does not evaluate"


def shared_value(op: Op) -> str:
    """The phrase of a shared load whose bytes the machine does not know (where it knows the
    address but not what was written there, or by whom)."""
    return (
        f"what shared memory holds at PTX line {op.ptx_line} (bytes an atomic, a copy or a store of "
        "unknown values wrote, or lanes of one store wrote differently)"
    )


def returned(op: Op) -> str:
    """The phrase of what an atomic, a matrix load or another unevaluated load returns."""
    if op.base in ("atom", "red"):
        return f"the value the atomic at PTX line {op.ptx_line} returns (the hardware orders the lanes)"
    return f"what {op.opcode} at PTX line {op.ptx_line} returns, which the machine does not evaluate"


def where_text(op: Op) -> str:
    """A load as a message names it: its source line, then its PTX line."""
    loc = op.loc or op.inner
    at = f"{loc.file.rsplit('/', 1)[-1]}:{loc.line} " if loc is not None else ""
    return f"the load at {at}(PTX line {op.ptx_line})"


def global_load(machine, op: Op, on: np.ndarray, dests: tuple[str, ...]) -> tuple[list[Value | None], str]:
    """A load of global memory: its bytes where the launch gives them
    (:class:`~bankproof.verifier.kernel.buffers.GlobalMemory`), else unknown, and why."""
    addr = machine.address(op)
    size, signed, count = load_width(op.opcode)
    vals, known, why = machine.globals.load(addr.v, on & addr.k, size, signed, count, where_text(op))
    if not addr.k[on].all():
        why = depends(machine, op) or why
    elif not known[on].all() and not why:
        why = depends(machine, op)
    got: list[Value | None] = [Value(v, known) for v in vals][: len(dests)]
    return got + [None] * (len(dests) - len(got)), why


def argument(machine, op: Op) -> str:
    """The argument an ``ld.param`` the launch does not give reads, and the flag that gives it."""
    m = PARAM_REF.fullmatch(op.operands[-1].strip()) if op.operands else None
    if not m or m.group(1) not in {n for _, n in machine.code.params}:
        return ""
    shown = machine.launch_names.get(m.group(1), m.group(1))
    return f"the argument {shown} (not given: --arg {shown}=INT)"
