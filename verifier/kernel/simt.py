"""The PTX machine: one CTA of a kernel run thread by thread (vectorized over the CTA), every
shared-memory instruction's dynamic instances recorded with each lane's byte address.

Threads keep their own program counter; each step runs the lowest one among live threads, for
every thread that is there (so a warp whose threads went different ways runs each way in turn and
they meet again where the ways join, as the hardware reconverges). Loops run as many times as their
bounds say; a branch on a value the machine does not know (loaded data, an argument not given)
cannot be followed: the threads that take it stop there and the report says so.

Addresses: a ``.shared`` symbol is its offset in the CTA's shared window (static symbols in
declaration order, each at its alignment, then the dynamic ``extern`` array); ``cvta`` between the
shared and generic spaces keeps the offset, so a generic ``ld``/``st`` of a pointer derived from a
shared symbol is a shared access. A pointer argument not given is a distinct 256-byte-aligned
address (cudaMalloc's alignment), which is all that global-line counts depend on.

>>> from bankproof.verifier.ptx.module import read_module, kernel_code
>>> code = kernel_code(read_module('''
... .visible .entry k(.param .u32 n)
... {
...   .shared .align 4 .b8 buf[512];
...   ld.param.u32 %r9, [n];
...   mov.u32 %r1, %tid.x;
...   mov.u32 %r2, 0;
... L:
...   shl.b32 %r3, %r1, 3;
...   mov.u32 %r4, buf;
...   add.s32 %r5, %r4, %r3;
...   st.shared.u32 [%r5], %r2;
...   add.s32 %r2, %r2, 1;
...   setp.lt.u32 %p1, %r2, %r9;
...   @%p1 bra L;
...   ret;
... }'''), None)
>>> t = run(code, Launch(block=(64, 1, 1), args=(("n", 3),)))
>>> i = t.instances[6]
>>> i.warp.tolist(), i.execution.tolist(), i.offsets[0, :3].tolist()
([0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2], [0, 8, 16])
"""

from __future__ import annotations

import re
import time

import numpy as np
from bankproof.models.errors import InputError
from bankproof.verifier.kernel import functions, provenance, smem_values
from bankproof.verifier.kernel.buffers import is_global_load
from bankproof.verifier.kernel.engine_uses import record_engine_use
from bankproof.verifier.kernel.records import Instances, Launch, Trace
from bankproof.verifier.kernel.sites import POINTER_BASE, MachineOp, classify, plan
from bankproof.verifier.kernel.values import (
    Value,
    arith,
    as_i64,
    collective,
    immediate,
    special_registers,
    width,
)
from bankproof.verifier.ptx.machine import PTX_CONSTANTS
from bankproof.verifier.ptx.module import KernelCode, Op

MAX_STEPS = 3_000_000
MAX_SECONDS = 120.0
_IMM = re.compile(r"^-?(0[xX][0-9a-fA-F]+|0[dDfF][0-9a-fA-F]+|\d+)[Uu]?$")
_MEM = re.compile(r"\[\s*([^\]]*?)\s*\]")


class Machine:
    """One CTA of ``code`` under ``launch`` (see the module docstring)."""

    def __init__(
        self, code: KernelCode, launch: Launch, max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS
    ):
        self.code, self.launch = code, launch
        self.n = -(-launch.threads // 32) * 32
        self.warps = self.n // 32
        self.plan = plan(code)
        self.symbols = self.plan.placement(launch.dynamic_smem)
        self.args = self.plan.arguments(launch)
        self.globals = self.plan.memory(launch, self.args)
        self.launch_names = dict(launch.names)
        self.why: dict[str, str] = {}  # register -> what its value (where unknown) depends on
        self.unknown_why: dict[int, str] = {}  # shared-memory instruction -> what its address depends on
        self.regs: dict[str, Value] = {}
        self.pc = np.zeros(self.n, dtype=np.int64)
        self.done = np.arange(self.n) >= launch.threads
        self.max_steps, self.deadline = max_steps, time.monotonic() + max_seconds
        self.rec: dict[int, list] = {}
        self.count: dict[tuple[int, int], int] = {}  # (op, warp) -> executions so far
        self.executed: dict[int, list[int]] = {}
        self.skipped: dict[int, int] = {}
        self.engines: dict[int, list] = {}
        self.calls = functions.CallState(self.n)
        self.smem = smem_values.Memory()
        self.counted = np.array(
            [i for i, k in enumerate(self.plan.kinds) if k is not None and k.family], dtype=np.int64
        )
        self.lost: dict[int, str] = {}
        self.notes: list[str] = list(self.plan.notes)
        self.special = special_registers(launch, self.n)

    # ----- operands ----------------------------------------------------------------------------
    def reg_name(self, name: str, op: Op) -> str:
        return f"{name}@{op.scope}" if (op.scope, name) in self.plan.local else name

    def value(self, text: str, op: Op) -> Value:
        t = text.strip()
        if t.startswith("%") or (op.scope, t) in self.plan.local:
            v = self.regs.get(self.reg_name(t, op))
            if v is not None:
                return v
            s = self.special.get(t)
            if s is not None:
                return Value(
                    np.broadcast_to(np.asarray(s, dtype=np.int64), (self.n,)).copy(), np.ones(self.n, bool)
                )
            return Value.unknown(self.n)
        if t in self.symbols:
            return Value.const(self.symbols[t], self.n)
        if t in PTX_CONSTANTS:  # WARP_SZ (nvcc and NVRTC write warpSize so)
            return Value.const(PTX_CONSTANTS[t], self.n)
        if t.startswith("{") and t.endswith("}"):
            parts = [self.value(p, op) for p in t[1:-1].split(",")]
            if len(parts) == 2:
                lo, hi = parts
                return Value((lo.v & 0xFFFFFFFF) | (hi.v << 32), lo.k & hi.k)
            return Value.unknown(self.n)
        if _IMM.match(t):
            if len(t) > 24:
                raise InputError("kernel", "ptx", "has an immediate wider than 64 bits", t[:40])
            return Value.const(immediate(t), self.n)
        return Value.unknown(self.n)

    def address(self, op: Op) -> Value:
        m = None
        for o in op.operands:
            if o.lstrip().startswith("["):
                m = _MEM.search(o)
                break
        if m is None:
            return Value.unknown(self.n)
        total = Value.const(0, self.n)
        for term in re.split(r"\s*\+\s*", m.group(1)):
            v = self.value(term, op)
            total = Value(total.v + v.v, total.k & v.k)
        return total

    def guard(self, op: Op, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Threads of ``group`` whose guard holds, and those whose guard is not known."""
        if op.guard is None:
            return group, np.zeros(self.n, bool)
        p = self.value(op.guard[1], op)
        on = (p.v != 0) ^ op.guard[0]
        return group & on & p.k, group & ~p.k

    def write(self, dest: str, op: Op, new: Value, where: np.ndarray) -> None:
        name = self.reg_name(dest, op)
        old = self.regs.get(name) or Value.unknown(self.n)
        self.regs[name] = old.merge(new, where)

    # ----- the run ----------------------------------------------------------------------------
    def run(self) -> Trace:
        self.steps = 0
        self.loop(None)
        steps = self.steps
        return Trace(
            {i: Instances.stack(rows) for i, rows in self.rec.items()},
            {i: (v[0], v[1]) for i, v in self.executed.items()},
            dict(self.lost),
            tuple(dict.fromkeys(self.notes)),
            steps,
            self.warps,
            dict(self.symbols),
            dict(self.skipped),
            self.regs,
            {i: tuple(rows) for i, rows in self.engines.items()},
            dict(self.unknown_why),
        )

    def loop(self, focus: np.ndarray | None, depth: int = 0) -> None:
        """Run the lowest program counter's threads until none is left: every live thread, or (a
        call) the threads of ``focus`` until they return from the call ``depth`` levels down."""
        body, nxt = self.code.body, self.plan.next_interesting
        size = len(body)
        while True:
            live = ~self.done if focus is None else focus & ~self.done & (self.calls.depth > depth)
            if not live.any():
                return
            pcs = np.where(live, self.pc, size + 1)
            pc = int(pcs.min())
            group = live & (self.pc == pc)
            if pc >= size:
                self.done |= group
                continue
            self.steps += 1
            if self.steps > self.max_steps or (self.steps % 4096 == 0 and time.monotonic() > self.deadline):
                self.lost[pc] = f"the analysis stopped after {self.steps - 1} steps (a limit, not a result)"
                self.done |= ~self.done
                return
            op, kind = body[pc], self.plan.kinds[pc]
            if kind is None:  # nothing the analysis needs: run straight on to the next thing it does
                others = pcs[~group]
                stop = int(others.min()) if others.size else size + 1
                self.pc[group] = min(int(nxt[pc]), stop) if nxt[pc] > pc else pc + 1
                continue
            try:
                self.step(op, kind, group, pc)
            except InputError:  # the user's own data (a buffer too small): said as it is
                raise
            except (IndexError, ValueError, OverflowError, ZeroDivisionError, TypeError) as e:
                # a malformed instruction (operands missing, a type of no width): not PTX ptxas takes
                raise InputError("kernel", "ptx", f"PTX line {op.ptx_line}: {op.opcode} is malformed "
                                 f"({type(e).__name__})", " ".join(op.operands)[:80]) from None  # fmt: skip

    def step(self, op: Op, kind: MachineOp, group: np.ndarray, pc: int) -> None:
        on, unknown = self.guard(op, group)
        self.pc[group] = pc + 1
        if kind.control:
            self.control(op, group, on, unknown, pc)
            return
        if kind.family:
            self.memory(op, kind, group, on, unknown, pc)
        if kind.dests:
            self.compute(op, kind, group, on, unknown)
        if kind.param:
            functions.store_param(self, op, on)

    def control(self, op: Op, group, on, unknown, pc: int) -> None:
        base = op.base
        if unknown.any() and pc in self.plan.harmless:  # either way: the counts do not depend on it
            self.pc[unknown] = self.plan.target(op)
            for i in self.plan.clobbers.get(pc, ()):  # what the skipped code computes: either value
                for d in self.plan.kinds[i].dests:
                    self.write(d, self.code.body[i], Value.unknown(self.n), unknown)
            self.notes.append(
                "branches on unknown values that skip no shared-memory work and no address or "
                "guard arithmetic are followed either way (the counts do not depend on them)"
            )
            unknown = unknown & False
        if unknown.any():
            why = provenance.of(self, op.guard[1], op) or "values the analysis does not know"
            self.lost[pc] = f"the branch condition {op.guard[1]} depends on {why}"
            self.done |= unknown
        if base == "ret":
            self.done |= functions.ret(self, on)
        elif base in ("exit", "trap"):
            self.done |= on
        elif base == "bra":
            target = self.plan.target(op)
            if target is None:
                self.lost[pc] = (
                    f"a branch to {op.operands[-1] if op.operands else '?'} that is not in the kernel"
                )
                self.done |= on
            else:
                self.pc[on] = target
                if target > pc + 1 and op.guard is not None:
                    self.around(group, on, pc, target)
        elif base == "brx":
            idx = self.value(op.operands[0], op)
            table = self.code.tables.get(op.operands[-1], ())
            for j, label in enumerate(table):
                t = self.code.labels.get(label)
                sel = on & idx.k & (idx.v == j)
                if t is not None:
                    self.pc[sel] = t
            bad = on & ~idx.k
            if bad.any():
                why = self.why.get(
                    self.reg_name(op.operands[0].strip(), op), "a value the analysis does not know"
                )
                self.lost[pc] = f"a switch on {why}"
                self.done |= bad
        elif base == "call":
            self.call(op, on, pc)

    def around(self, group: np.ndarray, on: np.ndarray, pc: int, target: int) -> None:
        """Warps whose every thread here branched forward past shared-memory instructions: if ptxas
        predicates the branch instead, they execute those instructions predicated off."""
        g = group.reshape(self.warps, 32)
        whole = int((g.any(axis=1) & ((on.reshape(self.warps, 32) | ~g).all(axis=1))).sum())
        if not whole:
            return
        lo, hi = np.searchsorted(self.counted, [pc + 1, target])
        for i in self.counted[lo:hi].tolist():
            self.skipped[i] = self.skipped.get(i, 0) + whole

    def call(self, op: Op, on: np.ndarray, pc: int) -> None:
        if functions.call(self, op, on, pc):
            return
        callee = next((o for o in op.operands if not o.startswith("(")), "?")
        if callee in self.plan.shared_callees:
            self.lost[pc] = f"a call to {callee}, which touches shared memory, is not followed"
            self.done |= on
            return
        self.notes.append(f"calls to {callee} are not followed (it touches no shared memory)")
        ret = op.operands[0] if op.operands and op.operands[0].startswith("(") else ""
        for r in re.findall(r"%[\w$]+", ret):
            self.write(r, op, Value.unknown(self.n), on)

    def compute(self, op: Op, kind: MachineOp, group, on, unknown) -> None:
        base = op.base
        srcs = [self.value(o, op) for o in op.operands[len(kind.dests) and 1 :]]
        res: list[Value | None]
        why = None  # what an unknown result depends on (None: what its sources depend on)
        if base in ("shfl", "vote", "activemask", "elect"):
            res = collective(op.opcode, srcs, group, len(kind.dests))
        elif base == "mbarrier" and "wait" in op.opcode:  # try_wait / test_wait: taken to succeed at once
            res = [Value.const(1, self.n)] + [None] * (len(kind.dests) - 1)
            self.notes.append(
                "mbarrier waits are taken to succeed at their first try (a spin count is timing)"
            )
        elif base == "mbarrier":  # an arrival's state token
            res = [None] * len(kind.dests)
        elif base == "ld" and self.plan.track_smem and kind.family == "lsu" and kind.name[2:].isdigit():
            self.load_why = ""
            res = smem_values.load(self, op, on, self.address(op), kind.dests)
            why = self.load_why or provenance.shared_value(op)
        elif base in ("ld", "ldu") and not kind.family and is_global_load(op.opcode):
            res, why = provenance.global_load(self, op, on, kind.dests)
        elif base in ("ld", "atom", "ldmatrix", "tcgen05", "wgmma", "red", "cp", "match", "redux"):
            res = [None] * len(kind.dests)
            why = provenance.returned(op)
            if base == "ld" and ".param" in op.opcode:
                res = [self.param(op)]
                why = "" if res[0] is not None else provenance.argument(self, op)
        elif base == "setp" and len(kind.dests) == 2:
            r = arith(op.opcode, srcs)
            res = [r, None if r is None else Value(1 - r.v, r.k)]
        else:
            res = [arith(op.opcode, srcs)]
        if why is None and res and res[0] is None and all(x.k[on].all() for x in srcs):
            why = provenance.unevaluated(op)
        for d, r in zip(kind.dests, res):
            self.write(d, op, r if r is not None else Value.unknown(self.n), on)
            if unknown.any():
                self.write(d, op, Value.unknown(self.n), unknown)
            provenance.note(self, d, op, on | unknown, why, len(kind.dests) and 1)

    def param(self, op: Op) -> Value | None:
        if len(op.operands) != 2:
            return None
        passed = functions.load_param(self, op)  # an argument or a result passed through .param
        if passed is not None:
            return passed
        m = provenance.PARAM_REF.fullmatch(op.operands[1].strip())
        if not m or m.group(1) not in self.args:
            return None
        v = self.args[m.group(1)] >> (8 * int(m.group(2) or 0))
        w = width(op.opcode)
        return Value.const(v & ((1 << w) - 1) if w < 64 else as_i64(v), self.n)

    def memory(self, op: Op, kind: MachineOp, group, on, unknown, pc: int) -> None:
        addr = self.address(op)
        warps = group.reshape(self.warps, 32)
        present = np.flatnonzero(warps.any(axis=1))
        ex = self.executed.setdefault(pc, [0, 0])
        ex[1] += len(present)
        ex[0] += int((on | unknown).reshape(self.warps, 32)[present].any(axis=1).sum())
        if kind.family in ("tma", "mma"):
            record_engine_use(self, op, kind, on, present, pc)
        if self.plan.track_smem:
            smem_values.track(self, op, kind, on, addr)
        if not kind.counted:
            return
        act = on.reshape(self.warps, 32)[present]
        unk = unknown.reshape(self.warps, 32)[present]
        offs = addr.v.reshape(self.warps, 32)[present]
        known = ~unk.any(axis=1) & ~((act & ~addr.k.reshape(self.warps, 32)[present]).any(axis=1))
        if not known.all() and pc not in self.unknown_why:
            self.unknown_why[pc] = provenance.depends(self, op)
        execs = np.array([self.count.get((pc, int(w)), 0) for w in present], dtype=np.int64)
        for w in present:
            self.count[(pc, int(w))] = self.count.get((pc, int(w)), 0) + 1
        src = None
        if kind.family == "ldgsts":
            g = self.value(re.sub(r"[\[\]]", "", op.operands[1]).split("+")[0], op)
            off = re.search(r"\+\s*(-?\d+)\s*\]", op.operands[1])
            gv = g.v + (int(off.group(1)) if off else 0)
            if len(op.operands) > 3:  # src-size: a lane copying 0 bytes reads no global memory (zero-fill)
                size = self.value(op.operands[3], op)
                gv = np.where(size.k & (size.v == 0), -1, gv)
            src = (gv.reshape(self.warps, 32)[present], g.k.reshape(self.warps, 32)[present])
        self.rec.setdefault(pc, []).append((present, execs, offs, act, warps[present], known, src))


def run(
    code: KernelCode, launch: Launch, max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS
) -> Trace:
    """Run one CTA of ``code`` (see :class:`Machine`)."""
    return Machine(code, launch, max_steps, max_seconds).run()


__all__ = ["POINTER_BASE", "Machine", "classify", "run"]
