"""The enumeration engine on many linear memory layouts at once (``verify_many``'s fast path): for
a linear memory layout the byte address of every (register, lane, warp) is the XOR of its input
bits' images under the layout's inverse, so each layout costs one elimination and a few vectorized
XORs, and the hardware model counts every layout's instructions in one batch per vector width.

>>> import numpy as np
>>> _apply(np.array([[1, 2], [2, 1]]), [1, 3]).tolist()
[[1, 3], [2, 3]]
"""

from __future__ import annotations

import numpy as np
from bankproof.models import hardware, target
from bankproof.models.layout import LinearLayout


def counts(p, layouts: list, size) -> dict[int, tuple[tuple, ...]]:
    """The layouts the XOR path covers: linear memory over the same dims, ``auto`` accesses with no
    CTA blocks, on a phase-model target with measured answers; every step vectorized over them."""
    t = target.get(p.arch)
    eb = max(1, p.elem_bits // 8)
    if not t.counts_from_bases or p.elem_bits % 8 or p.elem_bits > 64 or size is None:
        return {}
    if any(a.instr != "auto" or a.layout.in_bases("block") or len(a.layout.in_bases("lane")) != 5
           for a in p.accesses):  # fmt: skip
        return {}
    dims = p.memory.out_dim_names
    n = sum(s.bit_length() - 1 for s in size)
    idx = [i for i, m in enumerate(layouts) if isinstance(m, LinearLayout) and m.out_dim_names == dims
           and m.in_dim_names == ["offset"] and len(m.in_bases("offset")) == n]  # fmt: skip
    if not idx or n > 30:
        return {}
    shifts = np.cumsum([0] + [s.bit_length() - 1 for s in size[:-1]])
    bases = np.array([layouts[i].in_bases("offset") for i in idx], dtype=np.int64).reshape(len(idx), n, -1)
    pre, ok = _inverses((bases << shifts).sum(axis=2), n)
    idx, pre = [i for i, good in zip(idx, ok, strict=True) if good], pre[ok]
    per: dict[int, list[tuple]] = {i: [] for i in idx}
    for acc in p.accesses:
        dist = acc.layout.transpose_outs(dims)
        packed = {
            k: [dist.pack_dim0_lowest(b) for b in dist.in_bases(k)] for k in ("register", "lane", "warp")
        }
        nonzero = [b for b in packed["register"] if b]
        if len(set(nonzero)) != len(nonzero):  # a register repeating another's element: the general path
            return {}
        regs = _apply(pre, nonzero)
        lanes, warps = _apply(pre, packed["lane"]), _apply(pre, packed["warp"])
        for c, (members, rows, times) in _group_rows(regs, lanes, warps, eb).items():
            ins = hardware.instruction(f"{'ld' if acc.kind == 'load' else 'st'}{(1 << c) * eb * 8}")
            got = target.count_rows(p.arch, ins, rows * eb, np.ones(rows.shape, dtype=bool))
            for j, m in enumerate(members):
                i = idx[m]
                if got.unknown[j]:  # a row the model cannot say (unmeasured): the general path
                    per.pop(i, None)
                elif i in per:
                    wf, ideal = int(got.counts[j]) * times, int(got.ideals[j]) * times
                    per[i].append((acc.name, ins.short, times, wf, ideal))
    return {i: tuple(v) for i, v in per.items()}


def _inverses(cols: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``cols`` (K layouts, n packed coordinate images of the offset bits): the offset
    of each coordinate bit (the inverse's columns), and whether the layout is invertible; one
    Gauss-Jordan elimination run on all layouts at once."""
    k = len(cols)
    rows = (cols << n) | (np.int64(1) << np.arange(n, dtype=np.int64))[None, :]
    ok = np.ones(k, dtype=bool)
    ar = np.arange(k)
    for col in range(n):
        bit = (rows[:, col:] >> (n + col)) & 1
        has = bit.any(axis=1)
        ok &= has
        piv = col + bit.argmax(axis=1)
        pivot_row = rows[ar, piv]
        rows[ar, piv] = rows[:, col]
        rows[:, col] = pivot_row
        hit = ((rows >> (n + col)) & 1).astype(bool)
        hit[:, col] = False
        rows ^= np.where(hit, pivot_row[:, None], 0)
    return rows & ((1 << n) - 1), ok


def _apply(pre: np.ndarray, packed: list[int]) -> np.ndarray:
    """(K, len(packed)) element offsets of packed coordinates under each layout's inverse."""
    out = np.zeros((len(pre), len(packed)), dtype=np.int64)
    for j, x in enumerate(packed):
        for b in range(x.bit_length()):
            if x >> b & 1:
                out[:, j] ^= pre[:, b]
    return out


def _group_rows(regs: np.ndarray, lanes: np.ndarray, warps: np.ndarray, eb: int):
    """Per layout the widest vector (``build_access``'s ``auto``: registers at element offsets 1, 2,
    4, ... first, as far as every other input bit keeps the vector aligned and 16 bytes hold), then
    per vector width the layouts' first row (32 lane offsets) and how many instructions there are
    (one per warp and register chunk, each costing what the first row costs)."""
    k, r = regs.shape
    chain = np.zeros(k, dtype=np.int64)
    alive = np.ones(k, dtype=bool)
    for c in range(r):
        alive &= (regs == (1 << c)).any(axis=1)
        chain += alive
    in_chain = (regs > 0) & ((regs & (regs - 1)) == 0) & (regs < (np.int64(1) << chain)[:, None])
    low = np.bitwise_or.reduce(np.where(in_chain, 0, regs), axis=1) if r else np.zeros(k, dtype=np.int64)
    low |= np.bitwise_or.reduce(np.concatenate([lanes, warps], axis=1), axis=1)
    cap = max(0, (16 // eb).bit_length() - 1)
    c_star = np.minimum(chain, cap)
    trailing = np.where(low == 0, 63, np.log2(np.where(low == 0, 1, low & -low)).astype(np.int64))
    c_star = np.minimum(c_star, trailing)
    out = {}
    for c in sorted(set(c_star.tolist())):
        members = np.flatnonzero(c_star == c)
        lane_span = np.zeros((len(members), 1), dtype=np.int64)
        for col in lanes[members].T:
            lane_span = np.concatenate([lane_span, lane_span ^ col[:, None]], axis=1)
        # every other instruction is this row XOR a constant whose bits below the vector are 0:
        # XOR permutes banks and keeps equal words equal, so each costs what this row costs
        out[c] = (members, lane_span, 1 << (r - c + warps.shape[1]))
    return out
