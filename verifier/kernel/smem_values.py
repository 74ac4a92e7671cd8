"""Values that pass through shared memory: where a kernel's address or guard depends on a value it
loaded from shared memory (an index one thread wrote for all: a tile scheduler's, a block's offset),
the machine keeps what ``st.shared`` wrote (per 4- or 8-byte element, where every writing thread's
address and value are known) and gives it back to ``ld.shared`` of the same element. Anything else
that writes the bytes (another width, stmatrix, cp.async, TMA, atomics, mbarriers) makes them
unknown again, as does a store whose threads disagree on one element.

>>> m = Memory()
>>> m.write([(0, 4, 7)]); m.read(0, 4), m.read(4, 4)
(7, None)
>>> m.forget(0, 2); m.read(0, 4) is None
True
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.kernel.values import Value, width


class Memory:
    """Known elements of the CTA's shared memory: byte address -> (width, value)."""

    def __init__(self) -> None:
        self.cells: dict[int, tuple[int, int]] = {}

    def write(self, items: list[tuple[int, int, int | None]]) -> None:
        """``(address, width, value or None)`` written by one instruction (threads that disagree on
        one element leave it unknown)."""
        seen: dict[int, tuple[int, int | None]] = {}
        for a, w, v in items:
            if a in seen and seen[a] != (w, v):
                seen[a] = (w, None)
            else:
                seen[a] = (w, v)
        for a, (w, v) in seen.items():
            self.forget(a, a + w)
            if v is not None:
                self.cells[a] = (w, v)

    def read(self, address: int, w: int) -> int | None:
        got = self.cells.get(address)
        return got[1] if got is not None and got[0] == w else None

    def forget(self, start: int, end: int) -> None:
        """Bytes ``[start, end)`` written by something the machine does not follow."""
        for a in [a for a, (w, _) in self.cells.items() if a < end and start < a + w]:
            del self.cells[a]


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
                known = w in (4, 8) and v.k[t]
                items.append((int(addr.v[t]) + e * w, w, int(v.v[t]) if known else None))
        mem.write(items)
        return
    size = {"stsm.x1": 16, "stsm.x2": 16, "stsm.x4": 16}.get(name.replace(".trans", ""), 16)
    for t in lanes.tolist():
        if not addr.k[t]:
            mem.cells.clear()
            return
        mem.forget(int(addr.v[t]), int(addr.v[t]) + size)


def load(machine, op, on: np.ndarray, addr: Value, dests: tuple[str, ...]) -> list[Value | None]:
    """The values a plain ``ld.shared`` reads back where memory knows them."""
    mem: Memory = machine.smem
    w, _ = _elements(op, lambda n: None)
    n = machine.n
    out = []
    for e in range(len(dests)):
        v, k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        for t in np.flatnonzero(on & addr.k).tolist():
            got = mem.read(int(addr.v[t]) + e * w, w)
            if got is not None:
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
