"""Values that pass through shared memory: where a kernel's address or guard depends on a value it
loaded from shared memory (an index one thread wrote for all: a tile scheduler's, a block's offset),
the machine keeps what ``st.shared`` wrote (byte by byte, where every writing thread's address and
value are known) and gives it back to ``ld.shared`` of any width over known bytes (zero- or
sign-extended as its type says). Anything else that writes the bytes (stmatrix, cp.async, TMA,
atomics, mbarriers) makes them unknown again, as does a store whose threads disagree on a byte.

>>> m = Memory()
>>> m.write([(0, 4, 7)]); m.read(0, 4), m.read(4, 4), m.read(0, 2)
(7, None, 7)
>>> m.forget(0, 2); m.read(0, 4) is None
True
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.kernel.values import Value, width


class Memory:
    """Known bytes of the CTA's shared memory: byte address -> its value (0..255)."""

    def __init__(self) -> None:
        self.cells: dict[int, int] = {}
        self.why: dict[int, str] = {}  # an unknown byte -> what the value stored there depended on

    def write(self, items: list[tuple[int, int, int | None]], why: str = "") -> None:
        """``(address, width, value or None)`` written by one instruction, little-endian; the bytes
        threads of one instruction write differently are left unknown (which one wins is the
        hardware's); ``why``: what its unknown values depend on."""
        seen: dict[int, int | None] = {}
        for a, w, v in items:
            for b in range(w):
                byte = None if v is None else (v >> (8 * b)) & 0xFF
                seen[a + b] = None if a + b in seen and seen[a + b] != byte else byte
        for a, byte in seen.items():
            if byte is None:
                self.cells.pop(a, None)
                if why:
                    self.why[a] = why
            else:
                self.cells[a] = byte
                self.why.pop(a, None)

    def read(self, address: int, w: int) -> int | None:
        """The ``w`` bytes at ``address`` as an unsigned number, where all are known."""
        got = 0
        for b in range(w):
            byte = self.cells.get(address + b)
            if byte is None:
                return None
            got |= byte << (8 * b)
        return got

    def forget(self, start: int, end: int) -> None:
        """Bytes ``[start, end)`` written by something the machine does not follow."""
        for a in range(start, end):
            self.cells.pop(a, None)


def _elements(op, value_of) -> tuple[int, list]:
    """A plain ld/st.shared's element width and its data operands' values (one per vector lane)."""
    parts = op.opcode.split(".")
    vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    data = op.operands[1] if parts[0] == "st" else op.operands[0]
    names = [x.strip() for x in data.strip("{}").split(",")] if data.startswith("{") else [data]
    return width(op.opcode) // 8, [value_of(n) for n in names][:vec] if parts[0] == "st" else names


def store(machine, op, name: str, on: np.ndarray, addr: Value) -> None:
    """Record what a shared store writes (or forget the bytes it writes where not known)."""
    mem: Memory = machine.smem
    lanes = np.flatnonzero(on)
    if name.startswith("st") and name[2:].isdigit():
        w, values = _elements(op, lambda n: machine.value(n, op))
        items = []
        for t in lanes.tolist():
            if not addr.k[t]:
                mem.cells.clear()  # a store somewhere unknown: nothing read back is known
                return
            for e, v in enumerate(values):
                known = bool(v.k[t])
                items.append((int(addr.v[t]) + e * w, w, int(v.v[t]) if known else None))
        data = op.operands[1]
        regs = re.findall(r"%[\w$]+", data)
        why = next((w for r in regs if (w := machine.why.get(machine.reg_name(r, op)))), "")
        mem.write(items, why)
        return
    size = {"stsm.x1": 16, "stsm.x2": 16, "stsm.x4": 16}.get(name.replace(".trans", ""), 16)
    for t in lanes.tolist():
        if not addr.k[t]:
            mem.cells.clear()
            return
        mem.forget(int(addr.v[t]), int(addr.v[t]) + size)


def load(machine, op, on: np.ndarray, addr: Value, dests: tuple[str, ...]) -> list[Value | None]:
    """The values a plain ``ld.shared`` reads back where memory knows them (``machine.load_why``:
    what an unknown one depended on when it was stored, where that is known)."""
    mem: Memory = machine.smem
    w, _ = _elements(op, lambda n: None)
    n = machine.n
    out = []
    for e in range(len(dests)):
        v, k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        signed = op.opcode.split(".")[-1].startswith("s")
        for t in np.flatnonzero(on & addr.k).tolist():
            got = mem.read(int(addr.v[t]) + e * w, w)
            if got is None:
                machine.load_why = machine.load_why or mem.why.get(int(addr.v[t]) + e * w, "")
            if got is not None:
                if signed and w < 8 and got >> (8 * w - 1):
                    got -= 1 << (8 * w)
                elif w == 8 and got >= 1 << 63:
                    got -= 1 << 64
                v[t], k[t] = got, True
        out.append(Value(v, k))
    return out


_WRITERS = ("ldgsts", "atomic", "atom32", "mbarrier")  # write bytes this module does not follow


def track(machine, op, kind, on: np.ndarray, addr: Value) -> None:
    """Shared memory's known values after one instruction of ``machine`` (the PTX machine)."""
    if kind.family == "lsu" and kind.name.startswith(("st", "stsm")):
        store(machine, op, kind.name, on, addr)
    elif kind.family == "tma" or (kind.family in _WRITERS and not addr.k[on].all()):
        machine.smem.cells.clear()  # a box, or an address not known: nothing read back is known
    elif kind.family in _WRITERS:
        for t in np.flatnonzero(on).tolist():
            machine.smem.forget(int(addr.v[t]), int(addr.v[t]) + 16)
