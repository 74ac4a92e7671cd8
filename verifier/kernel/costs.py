"""From the machine's trace to what is counted: the CTA's shared window, the instances no GPU runs
as counted (outside the window, misaligned), the instructions reachable from a point, and which a
point the machine could not follow makes unknown. The counting itself is the engine's
(:mod:`bankproof.verifier.engine.tables`).

>>> import numpy as np
>>> from bankproof.models.hardware import instruction
>>> from bankproof.verifier.kernel.records import Instances
>>> ones = np.ones((1, 32), bool)
>>> inst = Instances(np.zeros(1, int), np.zeros(1, int), np.arange(32)[None] * 4 + 2, ones, ones, ones[:, 0])
>>> misaligned(instruction("ld32"), inst)
0
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from bankproof.models import copy_rule, hardware, target
from bankproof.verifier.kernel.records import Instances, InstructionReport
from bankproof.verifier.ptx.module import KernelCode

ZFILL_CG = (
    "cp.async.cg with zero-fill (a src-size operand): Nsight Compute's count of these copies is not the "
    "store's (4x it on some, equal on others, in one Triton fp8 matmul on an H100: "
    "gpu_checks/results/h100-2026-11-28-kernel-truth-2.json.gz), so it is not modelled"
)
TMA_NOTE = (
    "TMA copies add no LSU shared wavefronts (measured: gpu_checks/results/h100-2026-11-27-engines.json.gz)"
)


LARGEST_SMEM = 232448  # sm90's largest shared memory per block (227 KB): no launch has more


def shared_window(code: KernelCode, symbols: dict[str, int], dynamic: int) -> int:
    """The CTA's shared memory in bytes: its static variables as placed, and the dynamic array;
    where an ``extern`` array is declared and no dynamic size given, the largest any launch has.

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module(".visible .entry k() { .shared .align 4 .b8 a[100]; ret; }"), None)
    >>> shared_window(code, {"a": 0}, 256)
    368
    """
    end, extern = 0, False
    for s in code.shared:
        at = symbols.get(s.name, 0)
        extern |= s.size is None
        end = max(end, at + (s.size if s.size is not None else dynamic or LARGEST_SMEM))
    return end if extern or not dynamic else -(-end // 16) * 16 + dynamic  # no extern array: they follow


def outside(ins: hardware.Instr, inst: Instances, window: int) -> tuple[int, int] | None:
    """The first (row, lane) whose address lies outside the CTA's ``window`` bytes of shared memory
    (below 0, or its bytes past the end), else ``None``: no GPU executes it as counted."""
    lanes = ins.address_lanes
    width = 16 if ins.is_matrix else ins.width
    act = (np.ones_like(inst.active) if ins.is_matrix else inst.active)[:, :lanes] & inst.known[:, None]
    offs = inst.offsets[:, :lanes]
    bad = ((offs < 0) | (offs + width > window)) & act
    rows = np.flatnonzero(bad.any(axis=1))
    if not rows.size:
        return None
    row = int(rows[0])
    return row, int(np.flatnonzero(bad[row])[0])


def misaligned(ins: hardware.Instr, inst: Instances) -> int | None:
    """The first row where an active lane's address breaks the instruction's alignment (the
    hardware faults: a misaligned address error), else ``None``."""
    align = 16 if ins.is_matrix else ins.width
    lanes = ins.address_lanes
    act = np.ones_like(inst.active) if ins.is_matrix else inst.active
    bad = ((inst.offsets[:, :lanes] % align) != 0) & act[:, :lanes] & inst.known[:, None]
    bad |= (inst.offsets[:, :lanes] < 0) & act[:, :lanes] & inst.known[:, None]
    rows = np.flatnonzero(bad.any(axis=1))
    return int(rows[0]) if rows.size else None


def status(arch: str, ins: hardware.Instr) -> str:
    return target.status(arch, ins)


def reachable(code: KernelCode, starts: list[int]) -> set[int]:
    """Instruction indices reachable from ``starts`` (every way a branch can go)."""
    body, n = code.body, len(code.body)
    entries = sorted((f.entry, name) for name, f in code.functions.items())
    sites: dict[str, list[int]] = {}  # function -> the instructions after its call sites
    for op in body:
        if op.base == "call":
            name = next((o for o in op.operands if not o.startswith("(")), "")
            sites.setdefault(name, []).append(op.index + 1)
    seen: set[int] = set()
    todo = list(starts)
    while todo:
        i = todo.pop()
        if i in seen or i >= n:
            continue
        seen.add(i)
        op = body[i]
        nxt = []
        if op.base == "bra":
            name = op.operands[-1] if op.operands else ""
            t = code.labels.get(f"{name}@{op.scope}", code.labels.get(name))
            if t is not None:
                nxt.append(t)
            if op.guard is not None:
                nxt.append(i + 1)
        elif op.base == "brx":
            nxt += [code.labels[x] for x in code.tables.get(op.operands[-1], ()) if x in code.labels]
        elif op.base == "ret" and entries and i >= entries[0][0]:  # back to every call site of its function
            owner = [name for entry, name in entries if entry <= i][-1]
            nxt += sites.get(owner, [])
            if op.guard is not None:
                nxt.append(i + 1)
        elif op.base in ("ret", "exit", "trap") and op.guard is None:
            pass
        else:
            nxt.append(i + 1)
        todo += nxt
    return seen


def why_unknown(fam: str, inst, ok, name: str = "", depends: str = "") -> str:
    """Why an instruction's count is not decided (its reason in the report; ``depends``: what the
    machine saw its address or guard depend on)."""
    if not inst.known.all():
        if depends:
            return f"an address or guard depends on {depends}"
        return (
            "an address or guard depends on values the analysis does not know "
            "(loaded data, an argument not given)"
        )
    if fam == "ldgsts" and name.endswith("cg"):
        return ZFILL_CG
    if fam == "ldgsts":
        span = _copy_span(name, inst)
        if span is not None:
            return (f"cp.async.ca whose global-side and shared-side bank conflicts cross: measured between "
                    f"{span[0]} and {span[1]} wavefronts in all (models/copy_rule.py)")  # fmt: skip
        return (
            "cp.async.ca: lanes copying to one shared address, or global addresses not known (not modelled)"
        )
    return "not decided"


def _copy_span(name: str, inst) -> tuple[int, int] | None:
    """The measured range of a ``.ca`` copy's instances where their sides' conflicts cross."""
    if inst.source is None:
        return None
    width, lo, hi = int(name[2:].split(".")[0]), 0, 0
    for r in range(len(inst.warp)):
        if not inst.source_known[r][inst.active[r]].all():
            return None
        got = copy_rule.ldgsts_range(width, inst.offsets[r], inst.source[r], inst.active[r])
        if got is None:
            return None
        lo, hi = lo + got[0], hi + got[1]
    return lo, hi


def bounded(rep: InstructionReport, plain: bool, cnt, ok, active, width: int) -> InstructionReport:
    """A plain load's or store's report with bounds on wavefronts it cannot state."""
    if ok.all() or not plain:
        return rep
    return replace(rep, wavefronts_range=wavefront_bounds(cnt, ok, active, width))


def wavefront_bounds(cnt: np.ndarray, ok: np.ndarray, active: np.ndarray, width: int) -> tuple[int, int]:
    """Bounds on a load's or store's wavefronts where some executions' addresses are not known:
    each such execution takes at least one wavefront (a lane is on) and at most one per 4-byte
    word its 32 lanes access.

    >>> wavefront_bounds(np.array([2, 0]), np.array([True, False]), np.ones((2, 32), bool), 4)
    (3, 34)
    """
    known = int(cnt[ok].sum())
    open_rows = ~ok
    low = known + int(active[open_rows].any(axis=1).sum())
    return low, known + int(open_rows.sum()) * 32 * max(1, width // 4)
