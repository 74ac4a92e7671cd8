"""Control flow of a PTX kernel: its blocks, dominators and natural loops, which threads reach
each block, and the shared-memory instructions with each thread's byte address
(:func:`shared_ops`, :func:`analyse`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from bankproof.verifier.ptx.graph import Edge, dominance_test, immediate_dominators, reach_fixpoint
from bankproof.verifier.ptx.machine import REGS, PtxMachine
from bankproof.verifier.ptx.parse import Instruction, Kernel, SharedOp, classes_of, type_width


def _target(k: Kernel, ins: Instruction) -> int | None:
    """The instruction index a branch goes to (a label of its own inline-asm block first)."""
    name = ins.operands[-1] if ins.operands else ""
    return k.labels.get(f"{name}@{ins.scope}", k.labels.get(name))


@dataclass(frozen=True)
class PtxLoop:
    """A natural loop of the kernel's control flow: its header (the index of its first
    instruction, the loop's id) and the instructions of its body."""

    head: int
    body: frozenset[int]


def _blocks(k: Kernel) -> tuple[list[int], np.ndarray]:
    """Basic blocks: their start indices (the entry, every label, every instruction after a
    branch) and each instruction's block."""
    n = len(k.body)
    jumps = {i.index + 1 for i in k.body if i.opcode.startswith(("bra", "brx"))}
    starts = [s for s in sorted({0, *k.labels.values()} | jumps) if s < n]
    return starts, np.searchsorted(starts, np.arange(n), side="right") - 1


def _cfg(k: Kernel) -> tuple[list[int], np.ndarray, list[set[int]]]:
    """Basic blocks (start indices), each instruction's block, and each block's successors
    (every way a branch can go, predicates ignored)."""
    n = len(k.body)
    starts, block_of = _blocks(k)
    succ: list[set[int]] = [set() for _ in starts]
    for b, s in enumerate(starts):
        e = starts[b + 1] if b + 1 < len(starts) else n
        falls = True
        for ins in k.body[s:e]:
            base = ins.opcode.split(".")[0]
            if base == "brx" and ins.operands:
                table = (k.labels.get(x) for x in k.tables.get(ins.operands[-1], []))
                succ[b] |= {int(block_of[t]) for t in table if t is not None and t < n}
                falls = falls and ins.guard is not None
            elif base == "bra" and ins.operands:
                t = _target(k, ins)
                if t is not None and t < n:
                    succ[b].add(int(block_of[t]))
                falls = falls and ins.guard is not None
            elif base in ("ret", "exit", "trap") and ins.guard is None:
                falls = False
        if falls and b + 1 < len(starts):
            succ[b].add(b + 1)
    return starts, block_of, succ


def _loops(k: Kernel, dispatch: frozenset[int] = frozenset()) -> list[PtxLoop]:
    """The natural loops of the kernel's program: an edge (a branch or a fall-through) to a block
    that dominates its source closes a loop whose body is every block that reaches that edge
    without passing the header; loops sharing a header are one. Bodies, not text ranges: a
    rotated inner loop may end below its outer loop's last branch. Spin-waits inside inline asm
    are not loops of the kernel's program, and neither is the dispatch loop of warp
    specialization: a loop around a ``dispatch`` instruction (the worker warps' load of their
    state byte, after which they jump to their partition, which runs once per
    ``ttg.warp_specialize`` region; only worker warps run it, so no loop of the default warps'
    program holds it)."""
    starts, block_of, succ = _cfg(k)
    pred: list[set[int]] = [set() for _ in starts]
    for b, ss in enumerate(succ):
        for t in ss:
            pred[t].add(b)
    idom = immediate_dominators(succ, pred)
    bodies: dict[int, set[int]] = {}
    dom = dominance_test(idom)
    back = [(b, h) for b, ss in enumerate(succ) for h in ss if idom[b] is not None and dom(h, b)]
    for tail, head in back:  # a latch may fall through into its header
        if k.body[starts[head]].scope != 0:  # a spin-wait inside inline asm
            continue
        body = bodies.setdefault(head, {head})
        todo = [tail]
        while todo:
            b = todo.pop()
            if b not in body:
                body.add(b)
                todo += list(pred[b])
    n = len(k.body)
    out = []
    for head, blocks in sorted(bodies.items()):
        ends = [starts[b + 1] if b + 1 < len(starts) else n for b in blocks]
        idx = frozenset(i for b, e in zip(blocks, ends, strict=True) for i in range(starts[b], e))
        if not idx & dispatch:
            out.append(PtxLoop(starts[head], idx))
    return out


def _state_epochs(k: Kernel, m: PtxMachine) -> tuple[dict[int, list[int]], list[dict[str, np.ndarray]]]:
    """Warp specialization's state word. The default warps store, with constant stores, one byte
    per worker warp saying which partition it runs (and at the end, "exit"); each worker warp loads
    its byte (an address that depends on the warp) and branches on it. Returns the state loads
    (load index -> covering store indices) and one register assignment per store ("epoch"): the
    value each thread loads after that store (-1 for a thread no store covers)."""
    consts = []
    for st in k.body:
        if st.opcode.startswith("st.shared") and len(st.operands) == 2 and st.guard is None and st.scope == 0:
            a = m.address(st.operands[0], st.scope)
            elems = [m.value(x, st.scope) for x in st.operands[1].strip("{}").split(",")]  # {v0, v1}
            if a is None or len(set(a.tolist())) != 1 or any(v is None or np.ptp(v) for v in elems):
                continue
            size = type_width(st.opcode) // 8
            word = sum((int(v[0]) & ((1 << (8 * size)) - 1)) << (8 * size * i) for i, v in enumerate(elems))
            consts.append((st.index, int(a[0]), size * len(elems), word))
    loads: dict[int, list[int]] = {}
    epochs: dict[int, dict[str, np.ndarray]] = {}
    warps = k.threads // 32
    for ld in k.body:
        if not ld.opcode.startswith("ld.shared") or ld.scope != 0 or len(ld.operands) != 2 or warps < 2:
            continue
        dests = m._dests(ld)
        addr = m.address(ld.operands[1], ld.scope)
        if len(dests) != 1 or m.defs.get(dests[0]) != 1 or addr is None:
            continue
        if len(set(addr[: warps * 32 : 32].tolist())) < 2:  # one byte for every warp: not a state word
            continue
        width = type_width(ld.opcode) // 8
        cover = [c for c in consts if ((addr >= c[1]) & (addr + width <= c[1] + c[2])).any()]
        if not cover:
            continue
        loads[ld.index] = [c[0] for c in cover]
        for idx, lo, size, word in cover:
            hit = (addr >= lo) & (addr + width <= lo + size)
            shift = np.where(hit, 8 * (addr - lo), 0)
            val = np.where(hit, (word >> shift) & ((1 << (8 * width)) - 1), -1)
            epochs.setdefault(idx, {})[dests[0]] = val
    return loads, [epochs[i] for i in sorted(epochs)]


def _block_masks(k: Kernel, m: PtxMachine) -> tuple[list[np.ndarray], list[bool]]:
    """Per instruction: the threads that reach it, and whether a branch on a run-time value
    decides it (then both ways are taken). Reachability per thread is a fixpoint over all edges,
    back edges included (a rotated loop is entered in its middle)."""
    n = len(k.body)
    m.run()  # values first
    starts, block_of = _blocks(k)
    nb = len(starts)
    reach = [np.zeros(k.threads, dtype=bool) for _ in range(nb)]
    cond = [False] * nb
    if nb:
        reach[0][:] = True
    edges: list[list[tuple[int, np.ndarray | None, bool]]] = [[] for _ in range(nb)]
    for b, s in enumerate(starts):  # (successor, thread condition or None for all, on a run-time value)
        e = starts[b + 1] if b + 1 < nb else n
        rest: np.ndarray | None = None
        falls, unk_all = True, False
        for i in range(s, e):
            ins = k.body[i]
            base = ins.opcode.split(".")[0]
            if base == "ret" and ins.guard is None:
                falls = False
            if base == "brx" and ins.guard is None:
                edges[b] += _switch_edges(k, m, ins, block_of, rest, unk_all)
                falls = False
            if base != "bra" or not ins.operands:
                continue
            t = _target(k, ins)
            tb = int(block_of[t]) if t is not None and t < n else None
            p = m.predicate(ins)
            if ins.guard is None:
                if tb is not None:
                    edges[b].append((tb, rest, unk_all))
                falls = False
            elif p is None:
                if tb is not None:
                    edges[b].append((tb, rest, True))
                unk_all = True
            else:
                if tb is not None:
                    edges[b].append((tb, p if rest is None else rest & p, unk_all))
                rest = ~p if rest is None else rest & ~p
        if falls and b + 1 < nb:
            edges[b].append((b + 1, rest, unk_all))
    reach, cond = reach_fixpoint(edges, reach, cond)
    masks = [reach[int(block_of[i])] for i in range(n)]
    conds = [cond[int(block_of[i])] for i in range(n)]
    return masks, conds


def _switch_edges(k: Kernel, m: PtxMachine, ins: Instruction, block_of: np.ndarray,
                  rest: np.ndarray | None, unk: bool) -> list[Edge]:  # fmt: skip
    """The edges of ``brx.idx``: to each table entry, for the threads whose index selects it (all
    of them, on a run-time value, where the index is not known)."""
    n = len(k.body)
    targets = [k.labels.get(t) for t in k.tables.get(ins.operands[-1], [])] if len(ins.operands) > 1 else []
    idx = m.value(ins.operands[0], ins.scope) if ins.operands else None
    out = []
    for j, t in enumerate(targets):
        if t is None or t >= n:
            continue
        if idx is None:
            out.append((int(block_of[t]), rest, True))
            continue
        sel = idx == j
        out.append((int(block_of[t]), sel if rest is None else rest & sel, unk))
    return out


def _reach(k: Kernel) -> tuple[PtxMachine, list[np.ndarray], list[bool], dict[int, list[int]]]:
    """Per-thread reachability, with warp specialization's dispatch resolved: the control flow is
    followed once per state-word store with the state loads' values known, and the threads
    reaching an instruction in any of them reach it. If a thread the stores do not cover reaches a
    state load, the state is treated as unknown (both ways) instead."""
    m = PtxMachine(k)
    masks, conds = _block_masks(k, m)
    loads, epochs = _state_epochs(k, m)
    if not epochs:
        return m, masks, conds, {}
    um = [np.zeros_like(x) for x in masks]
    uc = [False] * len(masks)
    for assign in epochs:
        me = PtxMachine(k)
        me.vals.update(assign)
        em, ec = _block_masks(k, me)
        for i in range(len(masks)):
            um[i] = um[i] | em[i]
            uc[i] = uc[i] or ec[i]
        for li in loads:
            reg = me._dests(k.body[li])[0]
            if reg in assign and (em[li] & (assign[reg] < 0)).any():
                return m, masks, conds, {}
    return m, um, uc, loads


_SIDE_EFFECTS = ("st", "ld", "bar", "barrier", "atom", "red", "cp", "mbarrier", "stmatrix", "ldmatrix",
                 "wgmma", "tcgen05", "fence", "membar", "bra", "brx", "call", "exit", "trap")  # fmt: skip


def _exit_guard(k: Kernel, m: PtxMachine, ins: Instruction) -> np.ndarray | None:
    """The threads that still need a shared load in the kernel's tail: when everything after it
    up to ``ret`` is side-effect free or guarded by one predicate P, and the loaded value is only
    used under P, ptxas exits the threads where P is false before the load (SASS ``@!P EXIT;
    LDS`` in Triton 3.9.0's cubins for a reduction's result store; Nsight Compute counts the load
    for those warps only: gpu_checks/results/h100-2026-11-23-triton-kernels.json, the histogram,
    column-max and cross-entropy kernels). Not for ``ldmatrix``, which ptxas keeps before the
    exit. ``None`` otherwise."""
    dests = set(m._dests(ins))
    guard = None
    for later in k.body[ins.index + 1 :]:
        base = later.opcode.split(".", 1)[0]
        if base == "ret" and later.guard is None:
            break
        uses = any(r in dests for o in later.operands[1:] for r in REGS.findall(o)) or (
            base == "st" and any(r in dests for r in REGS.findall(" ".join(later.operands)))
        )
        if later.guard is not None:
            if guard is not None and later.guard != guard:
                return None
            guard = later.guard
            continue
        if uses or base in _SIDE_EFFECTS:
            return None
    else:
        return None
    if guard is None:
        return None
    v = m.value(guard[1])
    if v is None:
        return None
    return ~v.astype(bool) if guard[0] else v.astype(bool)


def shared_ops(k: Kernel) -> list[SharedOp]:
    """Every shared-memory instruction of the kernel, in program order, with per-thread offsets
    and active lanes where the code determines them."""
    return analyse(k)[0]


def analyse(k: Kernel) -> tuple[list[SharedOp], list[PtxLoop]]:
    """The kernel's shared-memory instructions (:func:`shared_ops`) and its program's loops
    (the warp-specialize dispatch loop is not one)."""
    m, masks, conds, loads = _reach(k)
    loops = _loops(k, frozenset(loads))
    warps = max(1, k.threads // 32)
    state: dict[int, int] = {}  # warp-specialize state load/stores -> executions (regions + exit)
    for load, stores in loads.items():
        state[load] = len(stores)
        state.update(dict.fromkeys(stores, 1))
    out = []
    for ins, c in zip(k.body, classes_of(k), strict=True):
        if c is None:
            continue
        fam, name = c
        around = tuple(lp.head for lp in loops if ins.index in lp.body)
        op = SharedOp(ins, fam, name, around, conds[ins.index])
        op.reach = masks[ins.index][: warps * 32].reshape(warps, 32)
        if ins.index in state:
            op.extra["ws_state"] = state[ins.index]
        pred = m.predicate(ins)
        mem = next((o for o in ins.operands if o.lstrip().startswith("[")), None)
        addr = m.address(mem, ins.scope) if mem is not None else None
        if pred is not None and fam in ("lsu", "ldgsts", "atomic") and addr is not None:
            # plain loads only: ptxas keeps an ldmatrix before the exit (measured: all warps run it)
            need = _exit_guard(k, m, ins) if fam == "lsu" and re.fullmatch(r"ld\d+", name) else None
            if need is not None:
                pred = pred & need
                op.extra["exit_before"] = True
            op.offsets = addr[: warps * 32].reshape(warps, 32)
        # the lanes that issue it (where the guard is known, even if the address is not)
        op.active = None if pred is None else (masks[ins.index] & pred)[: warps * 32].reshape(warps, 32)
        if fam in ("lsu", "ldgsts", "atomic") and pred is None:
            op.unknown = f"the predicate {ins.guard[1]} depends on run-time values"
        elif fam in ("lsu", "ldgsts", "atomic") and addr is None:
            op.unknown = "the address depends on run-time values (a loop-carried index, a parameter)"
        out.append(op)
    return out, loops
