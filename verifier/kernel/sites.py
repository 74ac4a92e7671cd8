"""What the PTX machine needs to know about a kernel before it runs, computed once per kernel: each
instruction's role (control flow, a shared-memory access and its family, the registers it writes
that matter), the registers that can matter (the backward slice of every shared address, guard,
branch operand and copy source), where shared symbols sit, and which arguments are pointers.

>>> from bankproof.verifier.ptx.module import Op
>>> classify(Op(0, 1, "ld.shared.v4.b32", ("{%r1, %r2, %r3, %r4}", "[%r5]"), None, 0, None, None), set())
('lsu', 'ld128')
>>> classify(Op(0, 1, "ld.u32", ("%r1", "[%rd5]"), None, 0, None, None), {"%rd5"})
('lsu', 'ld32')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from bankproof.models import atomic_rule
from bankproof.models.errors import InputError
from bankproof.verifier.kernel.buffers import Buffer, GlobalMemory
from bankproof.verifier.kernel.pointers import NO_DEST as _NO_DEST
from bankproof.verifier.kernel.pointers import origins, pointer_params, shared_pointers, written_params
from bankproof.verifier.kernel.records import Launch
from bankproof.verifier.ptx.module import KernelCode, Op
from bankproof.verifier.ptx.parse import Instruction
from bankproof.verifier.ptx.parse import classify as classify_shared

POINTER_BASE = 0x7F00_0000_0000  # pointer arguments not given: this + i * 2^32 (256-byte aligned)
_REGS = re.compile(r"%[\w$]+")
_CONTROL = frozenset({"bra", "brx", "ret", "exit", "trap", "call"})
_COLLECTIVE = frozenset({"shfl", "vote", "activemask", "elect", "match", "redux"})
# families whose per-lane addresses are recorded: "atom32" is a shared atomic of a measured form
# (models/atomic_rule.py), counted where the SASS runs it as measured
COUNTED = frozenset({"lsu", "ldgsts", "atom32"})
# families that touch shared memory with no measured rule yet (shared atomics and reductions: ATOMS,
# a CAS loop): their lines and the kernel are unknown, never proved
UNMODELLED = frozenset({"atomic", "dsmem", "bulk", "unclassified"})  # counted by no measured rule: unknown
_ADDRESS_ONLY = frozenset({"cvta", "mov", "isspacep", "mapa", "getctarank"})  # name the space, touch nothing


@dataclass(frozen=True)
class MachineOp:
    """An instruction's role: ``control`` flow, shared-memory ``family`` (``counted``: its lanes'
    addresses are recorded), and the ``dests`` it writes that the analysis needs."""

    control: bool = False
    family: str = ""
    name: str = ""
    counted: bool = False
    dests: tuple[str, ...] = ()
    param: bool = False  # st.param: an argument or a result on its way through the .param space


def _dests(op: Op) -> tuple[str, ...]:
    if op.base in _NO_DEST or not op.operands:
        return ()
    first = op.operands[0]
    if op.base == "wgmma" or first.lstrip().startswith("[") or first == "_":  # a memory operand: no dest
        return ()
    if "|" in first:  # shfl/setp ``d|p``: both written (an inline-asm block's names may lack a %)
        return tuple(x.strip() for x in first.split("|") if re.fullmatch(r"%?[A-Za-z_$][\w$]*", x.strip()))
    return tuple(_REGS.findall(first)) or ((first,) if re.fullmatch(r"[A-Za-z_$][\w$]*", first) else ())


def classify(op: Op, shared_ptrs: set[str]) -> tuple[str, str] | None:
    """``(family, name)`` of a shared-memory instruction (a generic ``ld``/``st`` whose address
    comes from a shared symbol included), else ``None``."""
    try:
        c = classify_shared(
            Instruction(op.index, op.ptx_line, op.opcode, list(op.operands), op.guard, ("", 0, 0))
        )
    except (ValueError, IndexError):
        raise InputError(
            "kernel", "ptx", f"has an instruction that is not PTX (PTX line {op.ptx_line})", op.opcode
        ) from None
    if c is not None and c[0] == "lsu" and "shared::cluster" in op.opcode:
        return "dsmem", c[1]  # another CTA's shared memory (distributed): not measured
    if c is not None and c[0] == "atomic" and (counted := atomic_rule.form(op.opcode)):
        return "atom32", counted
    if c is not None and op.opcode.startswith("st.bulk"):
        return "bulk", "st.bulk"  # the bulk engine clears shared memory: not measured
    if c is not None:
        return c
    parts = op.opcode.split(".")
    if "shared" in op.opcode and parts[0] not in _ADDRESS_ONLY:
        return "unclassified", op.opcode  # names shared memory, no rule counts it: its line is unknown
    if parts[0] in ("atom", "red") and not any(p.startswith(("shared", "global")) for p in parts):
        mem = next((o for o in op.operands if o.startswith("[")), "")
        if set(_REGS.findall(mem)) & shared_ptrs:  # a generic atomic on a shared address
            return "atomic", f"{parts[0]}.generic"
    if parts[0] in ("ld", "st") and not any(
        p in ("global", "local", "param", "const", "shared") or p.startswith(("shared", "global"))
        for p in parts
    ):
        mem = next((o for o in op.operands if o.startswith("[")), "")
        if set(_REGS.findall(mem)) & shared_ptrs:
            vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
            bits = next((int(p[1:]) for p in reversed(parts) if p[:1] in "usbf" and p[1:].isdigit()), 32)
            return "lsu", f"{parts[0]}{vec * bits}"
    return None


@dataclass
class Plan:
    """The static facts (see the module docstring)."""

    code: KernelCode
    kinds: list[MachineOp | None] = field(default_factory=list)
    next_interesting: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    local: frozenset[tuple[int, str]] = frozenset()
    pointers: tuple[str, ...] = ()
    shared_callees: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    harmless: frozenset[int] = frozenset()  # forward branches over nothing the analysis needs
    clobbers: dict[int, tuple[int, ...]] = field(default_factory=dict)  # harmless branch -> ops it skips
    track_smem: bool = False  # an address or guard depends on a value loaded from shared memory
    param_of: dict[str, str] = field(default_factory=dict)  # register -> the parameter whose address it holds

    def target(self, op: Op) -> int | None:
        name = op.operands[-1] if op.operands else ""
        return self.code.labels.get(f"{name}@{op.scope}", self.code.labels.get(name))

    def placement(self, dynamic: int) -> dict[str, int]:
        """Each shared symbol's offset: static ones in declaration order at their alignment, then
        the dynamic array at its alignment (at least 16 bytes)."""
        out, at = {}, 0
        for s in self.code.shared:
            align = max(s.align, 16 if s.size is None else 1)
            at = -(-at // align) * align
            out[s.name] = at
            at += s.size or 0
        return out

    def arguments(self, launch: Launch) -> dict[str, int]:
        """PTX parameter name -> value: the user's (by name or position), pointers not given at
        distinct 256-byte-aligned addresses (a buffer given: there too; a null one: 0)."""
        names = [n for _, n in self.code.params]
        given = dict(launch.args)
        bufs = self.buffers(launch)
        out = {}
        for i, name in enumerate(names):
            for key in (name, str(i)):
                if key in given:
                    out[name] = int(given[key])
        for i, name in enumerate(names):
            if name in bufs:
                out[name] = 0 if bufs[name].null else POINTER_BASE + (i << 32)
            elif name not in out and name in self.pointers:
                out[name] = POINTER_BASE + (i << 32)
        return out

    def buffers(self, launch: Launch) -> dict[str, Buffer]:
        """PTX parameter name -> the buffer the launch gives it (by name or position)."""
        names = [n for _, n in self.code.params]
        given = dict(launch.buffers)
        return {
            n: given.get(n, given.get(str(i))) for i, n in enumerate(names) if n in given or str(i) in given
        }

    def memory(self, launch: Launch, args: Mapping[str, int]) -> GlobalMemory:
        """The launch's global memory as loads read it (:class:`~.buffers.GlobalMemory`)."""
        names = [n for _, n in self.code.params]
        bases = {
            n: POINTER_BASE + (i << 32)
            for i, n in enumerate(names)
            if args.get(n) == POINTER_BASE + (i << 32)
        }
        written = written_params(self.code) if launch.buffers else frozenset()
        return GlobalMemory(self.buffers(launch), bases, written, dict(launch.names))


def plan(code: KernelCode) -> Plan:
    """The :class:`Plan` of ``code``."""
    body = code.body
    p = Plan(code, local=code.local)
    shared_ptrs = shared_pointers(code)
    classes = [classify(op, shared_ptrs) for op in body]
    need = base = _slice(code, classes)
    loads = [
        op for op, c in zip(body, classes)
        if c is not None and c[0] == "lsu" and c[1].startswith("ld") and c[1][2:].isdigit()
        and any(_key(d, op, code.local) in need for d in _dests(op))
    ]  # fmt: skip
    if loads:  # what a shared load reads back is what stores wrote: their values matter too
        p.track_smem = True
        extra = {_key(r, op, code.local) for op, c in zip(body, classes) if c is not None and c[0] == "lsu"
                 and c[1].startswith("st") for o in op.operands[1:] for r in _REGS.findall(o)}  # fmt: skip
        need = _slice(code, classes, extra)
    for op, c in zip(body, classes):
        if op.base in _CONTROL:
            p.kinds.append(MachineOp(control=True))
            continue
        dests = _dests(op)
        dests = dests if any(_key(d, op, code.local) in need for d in dests) else ()
        if op.base == "st" and ".param" in op.opcode and code.functions:
            p.kinds.append(MachineOp(param=True))
            continue
        if c is None and not dests:
            p.kinds.append(None)
            continue
        fam, name = c if c is not None else ("", "")
        p.kinds.append(MachineOp(False, fam, name, fam in COUNTED, dests))
    interesting = np.array([k is not None for k in p.kinds] + [True], dtype=bool)
    idx = np.where(interesting, np.arange(len(interesting)), len(interesting))
    p.next_interesting = np.minimum.accumulate(idx[::-1])[::-1][:-1] if len(body) else idx[:0]
    p.pointers = pointer_params(code)
    p.param_of = _param_addresses(code)
    harmless = set()
    for op in body:  # a branch whose way does not matter: what it skips touches no shared memory
        if op.base == "bra" and op.guard is not None:  # and computes nothing an address or guard needs
            t = p.target(op)
            skipped = range(op.index + 1, t) if t is not None and t > op.index else None
            if skipped is not None and all(_value_only(p.kinds[i], body[i], base, code) for i in skipped):
                harmless.add(op.index)
                p.clobbers[op.index] = tuple(i for i in skipped if p.kinds[i] is not None)
    p.harmless = frozenset(harmless)
    p.shared_callees = frozenset()  # a callee's body is another .func: not followed (see Machine.call)
    return p


def loaded_params(code: KernelCode) -> frozenset[str]:
    """The pointer parameters whose loaded values the analysis needs: a global load whose result
    reaches a shared-memory address, a guard or a branch reads through them (what a capture keeps
    of a launch's buffers)."""
    classes = [classify(op, shared_pointers(code)) for op in code.body]
    need = _slice(code, classes)
    origin = origins(code)
    out: set[str] = set()
    for op in code.body:
        loads = op.base in ("ld", "ldu") and ".param" not in op.opcode and ".shared" not in op.opcode
        if loads and any(_key(d, op, code.local) in need for d in _dests(op)):
            mem = next((o for o in op.operands if o.lstrip().startswith("[")), "")
            out |= {p for r in _REGS.findall(mem) for p in origin.get(r, ()) if p != "<local>"}
    return frozenset(out)


def _key(name: str, op: Op, local: frozenset[tuple[int, str]]) -> str:
    return f"{name}@{op.scope}" if (op.scope, name) in local else name


def _uses(op: Op, local) -> list[str]:
    names = []
    for o in op.operands:
        names += _REGS.findall(o)
        if (op.scope, o) in local:
            names.append(o)
    return [_key(n, op, local) for n in names]


def _value_only(kind: MachineOp | None, op: Op, base: set[str], code: KernelCode) -> bool:
    """Nothing the counts need: no instruction the machine runs, or one that only computes a value
    stored to shared memory (which a branch either way leaves unknown)."""
    if kind is None:
        return True
    return not (kind.control or kind.family or kind.param) and not any(
        _key(d, op, code.local) in base for d in kind.dests
    )


def _slice(code: KernelCode, classes, extra: set[str] = frozenset()) -> set[str]:
    local = code.local
    need: set[str] = set(extra)
    for op, c in zip(code.body, classes):
        if op.guard is not None:
            need.add(_key(op.guard[1], op, local))
        if op.base in ("bra", "brx"):
            need.update(_uses(op, local))
        elif op.base == "st" and ".param" in op.opcode and code.functions:  # what a call passes
            need.update(_key(r, op, local) for o in op.operands[1:] for r in _REGS.findall(o))
        elif c is not None:
            for o in op.operands:
                if o.lstrip().startswith("["):
                    need.update(_key(r, op, local) for r in _REGS.findall(o))
            if op.base == "wgmma":  # the descriptors: checked against the TMA boxes that wrote the tiles
                need.update(_key(r, op, local) for o in op.operands[1:3] if not o.startswith("{")
                            for r in _REGS.findall(o))  # fmt: skip
            if c[0] == "ldgsts":  # cp.async's src-size (zero-fill) decides which lanes read global memory
                need.update(_key(r, op, local) for o in op.operands[3:] for r in _REGS.findall(o))
    writers: dict[str, list[Op]] = {}
    for op in code.body:
        for d in _dests(op):
            writers.setdefault(_key(d, op, local), []).append(op)
    todo = list(need)
    while todo:
        for op in writers.get(todo.pop(), []):
            srcs = _uses(
                Op(op.index, op.ptx_line, op.opcode, op.operands[1:], None, op.scope, None, None), local
            )
            if op.guard is not None:
                srcs.append(_key(op.guard[1], op, local))
            for r in srcs:
                if r not in need:
                    need.add(r)
                    todo.append(r)
    return need


def _param_addresses(code: KernelCode) -> dict[str, str]:
    """Registers holding a kernel parameter's address (``mov.b64 %rd, k_param_0``, through ``cvta``
    and moves): how a TMA copy names its tensor map (a ``__grid_constant__`` parameter)."""
    params = {n for _, n in code.params}
    out: dict[str, str] = {}
    for op in code.body:
        if op.base in ("mov", "cvta") and len(op.operands) == 2:
            src = op.operands[1].strip()
            name = src if src in params else out.get(src)
            if name is not None and _REGS.fullmatch(op.operands[0]):
                out[op.operands[0]] = name
    return out
