"""The fix for a conflicting buffer, found and checked on the kernel's own accesses: every
shared-memory instruction that touches the buffer (writers and readers alike, all their dynamic
instances) is re-counted with the buffer's byte offsets remapped, by an XOR swizzle (CuTe's
``Swizzle<B,M,S>`` on byte offsets: bits [M, M+B) ^= bits [M+S, M+S+B)) or by padding (``pad``
bytes after every ``row`` bytes); the remap that costs fewest wavefronts in all (ties: no extra
bytes, then the smallest swizzle) is proposed, with what it costs. Both remaps are one-to-one, so
every element still has its own place; the kernel's index arithmetic is what changes.

>>> r = np.arange(32)[None] * 128
>>> int(swizzle(r, 3, 2, 5)[0, 1]), int(pad(r, 128, 4)[0, 1])
(132, 132)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from bankproof.models import hardware
from bankproof.verifier.kernel.records import Instances

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
        c, _, _ = hardware.evaluate(a.ins, new, act)
        total += int(c.sum())
    return total


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
    ideal = sum(int(hardware.evaluate(a.ins, a.inst.offsets[a.inst.known],
                                      a.inst.active[a.inst.known])[1].sum()) for a in accesses)  # fmt: skip
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
