"""What ptxas does to a kernel's shared loads before they run: adjacent scalar loads merged into
one vector load. Measured on an H100 (gpu_checks/results/h100-2026-11-28-kernel-truth.json.gz,
SASS beside each case): ``ld.shared`` of one base register (or symbol) at consecutive offsets, in
one straight run of code with no shared store, barrier or branch between them, become LDS.64 /
LDS.128 where the address is aligned to the vector's size: ptxas takes, from the lowest offset,
the widest aligned piece (CUB's BlockReduce reads words +12..+36 as LDS, LDS.128 at +16, LDS.64
at +32; the Programming Guide's tiled matmul reads ``As[ty][0..15]`` as four LDS.128). The machine
checks the alignment on every thread's address; where ptxas cannot prove what every thread shows,
it keeps the loads apart, so a merge is labelled ``assumed``. A register-based address is merged
only where a whole warp's lanes show it aligned: the CUDA Samples' scalarProd, whose last reduction
step runs one lane, kept its two loads apart (measured on an H200, ...-kernel-truth-5.json.gz).
Stores are kept as the PTX has them (no merged store was seen).

>>> from bankproof.verifier.ptx.module import read_module, kernel_code
>>> code = kernel_code(read_module('''
... .visible .entry k()
... {
...   .shared .align 16 .b8 buf[64];
...   ld.shared.u32 %r1, [buf+12];
...   ld.shared.u32 %r2, [buf+16];
...   ld.shared.u32 %r3, [buf+20];
...   ld.shared.u32 %r4, [buf+24];
...   ld.shared.u32 %r5, [buf+28];
...   ld.shared.u32 %r6, [buf+32];
... }'''), None)
>>> [(g.members, g.start) for g in candidates(code)]
[((0, 1, 2, 3, 4, 5), (12, 16, 20, 24, 28, 32))]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from bankproof.verifier.kernel.records import Instances
from bankproof.verifier.ptx.module import KernelCode, Op

_ADDR = re.compile(r"^\[\s*([%\w$]+)\s*(?:\+\s*(-?\d+))?\s*\]$")
_STOP = (
    "bar",
    "barrier",
    "membar",
    "fence",
    "bra",
    "brx",
    "call",
    "ret",
    "exit",
    "atom",
    "red",
    "cp",
    "st",
    "stmatrix",
    "mbarrier",
    "wgmma",
    "tcgen05",
)


@dataclass(frozen=True)
class Run:
    """Loads of one base at offsets ``start`` (in order of offset), instruction indices ``members``,
    each ``width`` bytes: candidates for ptxas to merge."""

    members: tuple[int, ...]
    start: tuple[int, ...]
    width: int
    register: bool = False  # the base is a register (its alignment is the lanes', not a constant's)


@dataclass(frozen=True)
class Reuse:
    """A load ptxas removes: ``index`` reads what ``of`` read (same base, offset and width, no
    shared store, barrier or branch between them)."""

    index: int
    of: int


@dataclass(frozen=True)
class Merge:
    """One vector load ptxas makes: the PTX loads ``members`` (the first carries it), ``size``
    bytes from the first member's address plus ``delta`` (``None``: the aligned ``size``-byte
    window holding each lane's address)."""

    members: tuple[int, ...]
    size: int
    delta: int | None
    seen: bool = False  # read from the SASS, not predicted


def _load(op: Op) -> tuple[str, int, int] | None:
    """(base, offset, width) of a plain scalar ``ld.shared``."""
    parts = op.opcode.split(".")
    if parts[0] != "ld" or "volatile" in parts or not any(p.startswith("shared") for p in parts):
        return None
    if any(re.fullmatch(r"v\d", p) for p in parts) or len(op.operands) != 2:
        return None
    width = next((int(p[1:]) // 8 for p in reversed(parts) if p[:1] in "usbf" and p[1:].isdigit()), 0)
    m = _ADDR.match(op.operands[1].strip())
    if width not in (4, 8) or not m:
        return None
    return m.group(1), int(m.group(2) or 0), width


def candidates(code: KernelCode) -> list[Run]:
    """Runs of loads of one base, width and guard in straight-line code."""
    return scan(code)[0]


def reuses(code: KernelCode) -> list[Reuse]:
    """Loads that repeat an earlier load of the same run (ptxas keeps the first's value).

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module('''
    ... .visible .entry k()
    ... {
    ...   .shared .align 16 .b8 buf[64];
    ...   ld.shared.u32 %r1, [buf+12];
    ...   shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
    ...   ld.shared.u32 %r3, [buf+12];
    ... }'''), None)
    >>> reuses(code)
    [Reuse(index=2, of=0)]
    """
    return scan(code)[1]


def scan(code: KernelCode) -> tuple[list[Run], list[Reuse]]:
    """Merge candidates and repeated loads, in one pass over the code."""
    starts = set(code.labels.values())
    out: list[Run] = []
    again: list[Reuse] = []
    open_: dict[tuple, list[tuple[int, int]]] = {}
    seen: dict[tuple, dict[int, int]] = {}  # each open run's offsets -> its first load of them
    bases: dict[str, dict[tuple, None]] = {}  # base register -> the open runs' keys on it, in order

    def flush() -> None:
        for (base, width, _), items in open_.items():
            if len(items) > 1:
                items.sort(key=lambda t: t[1])
                out.append(
                    Run(tuple(i for i, _ in items), tuple(o for _, o in items), width, base.startswith("%"))
                )
        open_.clear()
        seen.clear()
        bases.clear()

    for op in code.body:
        if op.index in starts:
            flush()
        ld = _load(op)
        if ld is not None:
            base, off, width = ld
            key = (base, width, op.guard)
            first = seen.setdefault(key, {})
            if off in first:
                again.append(Reuse(op.index, first[off]))
            else:
                first[off] = op.index
                open_.setdefault(key, []).append((op.index, off))
                bases.setdefault(base, {})[key] = None
            continue
        if op.base in _STOP:
            flush()
            continue
        dest = op.operands[0] if op.operands else ""
        for key in bases.pop(dest, {}):  # the base register is written: its run ends
            items = open_.pop(key)
            seen.pop(key, None)
            if len(items) > 1:
                items.sort(key=lambda t: t[1])
                out.append(
                    Run(
                        tuple(i for i, _ in items), tuple(o for _, o in items), key[1], key[0].startswith("%")
                    )
                )
    flush()
    return out, again


def merges(runs: list[Run], instances: dict[int, Instances]) -> list[Merge]:
    """The vector loads ptxas makes of ``runs``: greedily from the lowest offset, the widest piece
    (16, then 8 bytes) of consecutive offsets whose address is aligned in every instance."""
    out: list[Merge] = []
    for run in runs:
        insts = [instances.get(i) for i in run.members]
        if any(x is None for x in insts) or any(x.offsets.shape != insts[0].offsets.shape for x in insts):
            continue
        i = 0
        while i < len(run.members):
            took = 1
            for size in (16, 8):
                n = size // run.width
                if n < 2 or i + n > len(run.members):
                    continue
                offs = run.start[i : i + n]
                if any(offs[k] != offs[0] + k * run.width for k in range(n)):
                    continue
                first = insts[i]
                live = first.active & first.known[:, None]
                if np.any((first.offsets[live] % size) != 0):
                    continue
                if run.register and not live.all(axis=1).any():  # measured: a reduction's last step (one
                    continue  # lane on) kept LDS, LDS; ptxas proves a register's alignment, not the lanes

                out.append(Merge(run.members[i : i + n], size, 0))
                took = n
                break
            i += took
    return out


def merged_instances(m: Merge, instances: dict[int, Instances]) -> Instances:
    """The instances of the vector load ``m`` stands for (its first member's lanes and addresses)."""
    first = instances[m.members[0]]
    at = first.offsets - first.offsets % m.size if m.delta is None else first.offsets + m.delta
    return Instances(first.warp, first.execution, at, first.active, first.reached, first.known)


def merge_note(code: KernelCode, m: Merge, instr: str) -> str:
    """What a vector load ptxas makes of PTX loads is, for the report's notes."""
    lines = ", ".join(str(code.body[i].ptx_line) for i in m.members)
    sass_op = f"{instr[:2].upper()}S.{8 * m.size}"
    if m.delta is None:
        return (
            f"ptxas runs the load at PTX line {lines} as one {sass_op} over the aligned {m.size}-byte "
            "window holding each lane's address (read from the SASS)"
        )
    how = "read from the SASS" if m.seen else "measured, assumed where ptxas cannot prove the alignment"
    return f"ptxas merges adjacent shared accesses (PTX lines {lines}: one {sass_op}; {how})"


_EFFECTS = ("st", "ld", "bar", "barrier", "atom", "red", "cp", "mbarrier", "stmatrix", "ldmatrix", "wgmma",
            "tcgen05", "fence", "membar", "bra", "brx", "call", "exit", "trap")  # fmt: skip


def exits_before(code: KernelCode) -> dict[int, tuple[bool, str]]:
    """Shared loads in a kernel's tail that ptxas moves after an early exit: when everything after
    the load up to ``ret`` is free of side effects or guarded by one predicate P, and the loaded
    value is used only under P, ptxas exits the threads where P is false before the load (SASS
    ``@!P EXIT; LDS``), so only warps with a thread under P execute it (measured in Triton's
    reductions, gpu_checks/results/h100-2026-11-23-triton-kernels.json; ldmatrix is kept before the
    exit). Returns load index -> P as ``(negated, register)``.

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module('''
    ... .visible .entry k(.param .u64 k_param_0)
    ... {
    ...   .shared .align 4 .b8 buf[64];
    ...   mov.u32 %r1, %tid.x;
    ...   ld.shared.u32 %r2, [buf];
    ...   setp.eq.s32 %p1, %r1, 0;
    ...   @%p1 st.global.u32 [%rd1], %r2;
    ...   ret;
    ... }'''), None)
    >>> exits_before(code)
    {1: (False, '%p1')}
    """
    out: dict[int, tuple[bool, str]] = {}
    mixed = ("mixed",)
    ends_in_ret, guard, used = False, None, {}  # what lies between here and the next unguarded effect
    for op in reversed(code.body):  # one backward pass: linear in the instructions
        parts = op.opcode.split(".")
        if parts[0] == "ld" and any(p.startswith("shared") for p in parts) and op.operands:
            dests = set(_REG.findall(op.operands[0]))
            if ends_in_ret and guard not in (None, mixed) and not any(d in used for d in dests):
                out[op.index] = guard
        if op.guard is not None:
            guard = op.guard if guard in (None, op.guard) else mixed
        elif op.base == "ret":
            ends_in_ret, guard, used = True, None, {}
        elif op.base in _EFFECTS:
            ends_in_ret, guard, used = False, None, {}
        else:
            used.update(dict.fromkeys(_REG.findall(" ".join(op.operands[1:]))))
    return dict(sorted(out.items()))


def after_exit(inst: Instances, pred) -> Instances:
    """``inst`` with only the lanes whose predicate ``pred`` (a ``(negated, Value)``) holds active; a
    warp with none is dropped (it exited before the load)."""
    negated, value = pred
    on = ((value.v != 0) ^ negated) & value.k
    lanes = on.reshape(-1, 32)[inst.warp]
    act = inst.active & lanes
    keep = act.any(axis=1)
    src = None if inst.source is None else inst.source[keep]
    srck = None if inst.source_known is None else inst.source_known[keep]
    return Instances(inst.warp[keep], inst.execution[keep], inst.offsets[keep], act[keep], inst.reached[keep],
                     inst.known[keep], src, srck)  # fmt: skip


def dead_loads(code: KernelCode) -> set[int]:
    """Shared loads (``ld``, ``ldmatrix``; not ``.volatile``) whose every result is overwritten, or
    the kernel ends, before anything reads it, in straight-line code: ptxas removes them (measured:
    an ldmatrix.x1 and .x2 whose registers the next ldmatrix.x4 overwrote issued no instruction,
    gpu_checks/results/h100-2026-11-28-kernel-truth-3.json.gz). A label, a branch or a call on the way
    keeps the load (its result may be read elsewhere).

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module(\'\'\'
    ... .visible .entry k()
    ... {
    ...   .shared .align 16 .b8 buf[64];
    ...   ld.shared.u32 %r1, [buf];
    ...   ld.shared.u32 %r1, [buf+4];
    ...   st.shared.u32 [buf+8], %r1;
    ... }\'\'\'), None)
    >>> sorted(dead_loads(code))
    [0]
    """
    starts = set(code.labels.values())
    out: set[int] = set()
    live_by_default, fate = True, {}  # each register's fate from here on: read first (True) or not
    for op in reversed(code.body):  # one backward pass: linear in the instructions
        parts = op.opcode.split(".")
        if parts[0] in ("ld", "ldmatrix") and "volatile" not in parts and op.operands:
            dests = set(_REG.findall(op.operands[0]))
            shared = any(p.startswith("shared") for p in parts)
            if dests and shared and not any(fate.get(d, live_by_default) for d in dests):
                out.add(op.index)
        # the fate of each register just before ``op``, as a load earlier in the block sees it
        first = op.operands[0] if op.operands else ""
        reads = set(
            _REG.findall(" ".join(op.operands[1:]) + (" " + first if op.base in _WRITES_FIRST else ""))
        )
        if op.guard is not None:
            reads.add(op.guard[1])
        if op.base in ("ret", "exit") and op.guard is None:
            live_by_default, fate = False, {}
        elif op.guard is None and op.base not in _WRITES_FIRST and op.operands:
            for d in _REG.findall(first):
                fate[d] = False
        for r in reads:
            fate[r] = True
        if op.index in starts or op.base in ("bra", "brx", "call"):  # its result may be read elsewhere
            live_by_default, fate = True, {}
    return out


_REG = re.compile(r"%[\w$]+")


# instructions whose first operand is read, not written (a store's address and value, a barrier's)
_WRITES_FIRST = frozenset({"st", "stmatrix", "red", "cp", "bar", "barrier", "mbarrier", "wgmma", "tcgen05",
                           "fence", "membar", "prefetch", "tensormap", "ret", "exit", "trap"})  # fmt: skip


def predicted(code: KernelCode, instances: dict[int, Instances]) -> dict:
    """What ptxas does, predicted by the measured rules above (where no SASS is at hand): index ->
    :class:`Merge` or :class:`Reuse` (``of`` = -1: its result is unread)."""
    runs, reused = scan(code)
    out: dict = {i: m for m in merges(runs, instances) for i in m.members}
    out.update({r.index: r for r in reused})
    out.update({i: Reuse(i, -1) for i in dead_loads(code)})
    return out
