"""The fix for a conflicting buffer, found and checked on the kernel's own accesses: every
shared-memory instruction that touches the buffer (writers and readers alike, all their dynamic
instances) is re-counted with the buffer's byte offsets remapped, by an XOR swizzle (CuTe's
``Swizzle<B,M,S>`` on byte offsets: bits [M, M+B) ^= bits [M+S, M+S+B), pictured in
:data:`bankproof.models.swizzle.SWIZZLE_DIAGRAM`) or by padding (``pad``
bytes after every ``row`` bytes); the remap that costs fewest wavefronts in all (ties: no extra
bytes, then the smallest swizzle) is proposed, with what it costs. Both remaps are one-to-one, so
every element still has its own place; the kernel's index arithmetic is what changes.

>>> r = np.arange(32)[None] * 128
>>> int(swizzle(r, 3, 2, 5)[0, 1]), int(pad(r, 128, 4)[0, 1])
(132, 132)
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np
from bankproof.models import hardware
from bankproof.models.hardware import instruction
from bankproof.verifier.engine import tables
from bankproof.verifier.kernel import ptxas, reconcile, simt
from bankproof.verifier.kernel.records import Instances, Launch, Trace
from bankproof.verifier.ptx.module import KernelCode

MAX_ROWS = 200_000  # instances of one buffer above which no fix is searched (time)


@dataclass(frozen=True)
class Access:
    """One instruction's instances on the buffer, with the instruction kind that counts them."""

    ins: hardware.Instr
    inst: Instances


def readable(symbol: str) -> str:
    """A shared symbol as the source names it: ``_ZZ14transpose_vec4E4tile`` -> ``tile`` (in
    transpose_vec4), other names as they are.

    >>> readable("_ZZ14transpose_vec4E4tile"), readable("sram")
    ('tile (in transpose_vec4)', 'sram')
    """
    m = re.fullmatch(r"_ZZ(\d+)(\w+?)E(\d+)(\w+)", symbol)
    if m and len(m.group(2)) >= int(m.group(1)):
        func = m.group(2)[: int(m.group(1))]
        name = m.group(4)[: int(m.group(3))]
        return f"{name} (in {func})"
    return symbol


def swizzle(r: np.ndarray, b: int, m: int, s: int) -> np.ndarray:
    return r ^ (((r >> (m + s)) & ((1 << b) - 1)) << m)


def pad(r: np.ndarray, row: int, extra: int) -> np.ndarray:
    return r + (r // row) * extra


def _total(accesses: list[Access], base: int, remap) -> int:
    total = 0
    for a in accesses:
        live = a.inst.known
        offs = a.inst.offsets[live]
        act = a.inst.active[live] if not a.ins.is_matrix else np.ones_like(offs, dtype=bool)
        new = base + remap(np.where(act, offs - base, 0))
        align = 16 if a.ins.is_matrix else a.ins.width
        if np.any((new[act] % align) != 0):
            return -1  # the remap breaks an access's alignment
        c, _ = tables.evaluate(a.ins, new, act)
        total += int(c.sum())
    return total


def _issued(a: Access) -> np.ndarray:
    """An access's known rows, with the addresses of lanes that do not issue zeroed (what a lane
    off computed is no address: a guarded-off thread's, a loop's next)."""
    live = a.inst.known
    act = a.inst.active[live] if not a.ins.is_matrix else np.ones_like(a.inst.offsets[live], dtype=bool)
    return np.where(act, a.inst.offsets[live], 0)


def best(accesses: list[Access], base: int, size: int, name: str) -> str | None:
    """The cheapest remap of the buffer ``name`` at ``base`` (``size`` bytes), in words, or ``None``
    when none is cheaper than the layout the kernel has."""
    if sum(len(a.inst.warp) for a in accesses) > MAX_ROWS:
        return None
    for a in accesses:  # a fix is searched for buffers whose accesses are all aligned as issued
        live = a.inst.active & a.inst.known[:, None] if not a.ins.is_matrix else a.inst.known[:, None]
        if np.any(
            (a.inst.offsets % (16 if a.ins.is_matrix else a.ins.width))[
                np.broadcast_to(live, a.inst.offsets.shape)
            ]
        ):
            return None
    now = _total(accesses, base, lambda r: r)
    ideal = sum(
        int(tables.evaluate(a.ins, _issued(a), a.inst.active[a.inst.known])[1].sum()) for a in accesses
    )
    widest = max(16 if a.ins.is_matrix else a.ins.width for a in accesses)
    low = max(2, widest.bit_length() - 1)
    top = max(1, int(size - 1).bit_length())
    found: list[tuple] = []
    for m in range(low, 5):
        for b in (1, 2, 3):
            for s in range(max(b, 3), 8):
                if m + s + b > top:
                    continue
                t = _total(accesses, base, lambda r, b=b, m=m, s=s: swizzle(r, b, m, s))
                if t >= 0:
                    rule = f"r ^ (((r >> {m + s}) & {(1 << b) - 1}) << {m})"
                    found.append(
                        (
                            t,
                            0,
                            b,
                            f"XOR-swizzle {name}: byte offset r -> {rule} "
                            f"(CuTe Swizzle<{b},{m},{s}> on bytes)",
                        )
                    )
    for row in (64, 128, 256, 512, 1024, 2048, 4096):
        if row >= size:
            break
        for extra in sorted({max(4, widest), 4, 8, 16}):
            if extra < widest:
                continue
            t = _total(accesses, base, lambda r, row=row, extra=extra: pad(r, row, extra))
            if t >= 0:
                grow = (size - 1) // row * extra
                found.append((t, grow, 4, f"pad {name}: {extra} bytes after every {row} ({grow} bytes more)"))
    if not found:
        return None
    t, grow, _, words = min(found, key=lambda f: (f[0], f[1], f[2]))
    if t >= now:
        return None
    return f"{words}: its {len(accesses)} instructions then cost {t} wavefronts (now {now}, ideal {ideal})"


def with_fixes(
    code: KernelCode, trace: Trace, reports: list, merge_of: dict, launch: Launch, notes: list
) -> list:
    """Each conflicting instruction with the fix of its buffer (:func:`best`), where one is found;
    not where TMA or a tensor core also touches shared memory (their layouts are fixed by them)."""
    if any(r.family in ("tma", "mma") for r in reports):
        notes.append("no layout fix is proposed: TMA or tensor-core instructions read shared memory in "
                     "layouts of their own (see bankproof agree)")  # fmt: skip
        return reports
    op_of = {o.ptx_line: o for o in code.body}
    places = simt.plan(code).placement(launch.dynamic_smem)
    sizes = {sym.name: sym.size if sym.size is not None else launch.dynamic_smem for sym in code.shared}
    by_buffer: dict[str, list] = defaultdict(list)
    for r in reports:
        op = op_of[r.ptx_line]
        inst = trace.instances.get(op.index)
        m = merge_of.get(op.index)
        if r.family not in ("lsu", "ldgsts") or inst is None or r.instructions == 0:
            continue  # (an atomic's lanes on one word serialize however the buffer is laid out)
        if isinstance(m, (ptxas.Reuse, reconcile.Fate)):
            continue
        if m is not None:
            inst = ptxas.merged_instances(m, dict(trace.instances))
        live = inst.offsets[inst.active & inst.known[:, None]]
        name = next(
            (n for n, b in places.items() if live.size and b <= live.min() and live.max() < b + sizes[n]),
            None,
        )
        if name is None:
            continue
        width = int(r.instr[2:].split(".")[0]) if r.family == "ldgsts" else 0
        ins = instruction({4: "st32", 8: "st64", 16: "st128"}[width]) if width else instruction(r.instr)
        by_buffer[name].append((r, Access(ins, inst)))
    out = {id(r): r for r in reports}
    for name, items in by_buffer.items():
        if not any(r.conflict is not None for r, _ in items) or any(
            r.rests_on == "misaligned" for r, _ in items
        ):
            continue  # a buffer with a misaligned access needs that fixed first
        text = best([a for _, a in items], places[name], max(1, sizes[name]), f"`{readable(name)}`")
        if text:
            for r, _ in items:
                if r.conflict is not None:
                    out[id(r)] = replace(r, fix=text)
    return [out[id(r)] for r in reports]
