"""What one ``cp.async`` (LDGSTS) warp instruction costs in shared-memory wavefronts, as measured.

A copy reads its global side through L1's banks and writes its shared side through them: two lanes
conflict on the global side when they read one bank of different 128-byte lines, on the shared
side when a store of the copy's width would conflict. Measured on an H100
(``gpu_checks/results/h100-2026-12-07-cp-async-cross.json.gz``, 309 ``.ca`` probes of 4, 8 and 16
bytes, shared-side ``32/a``-way and global-side ``32/c``-way conflicts under the identity, the
transpose and random lane permutations): where one side's conflicting lane pairs are among the
other's (*nested*), the count is the larger side's, exactly (219 of 219); where the sides *cross*
(neither holds the other's pairs) it lies between the larger side and their sum (90 of 90) but is
no function of the two counts (4 and 4 crossing gave 7; 16 and 16 gave 24 and 25): unknown, with
that range. The earlier records agree: H200 ``h200-2026-11-28-cp-async-sweep.json`` (157 global
strides, all nested, all equal) and H100 ``h100-2026-11-22-cp-async.json`` (176 shared patterns:
152 nested, all equal; 24 crossing, all within the range).

>>> contiguous, spread = [4 * i for i in range(32)], [16 * i for i in range(32)]
>>> ldgsts_wavefronts(4, contiguous, spread), ldgsts_range(4, contiguous, spread)
(4, (4, 4))
>>> rows = [4 * (i % 8) + 128 * (i // 8) for i in range(32)]
>>> cols = [4 * (i // 4 % 8) + 128 * (i % 4) for i in range(32)]
>>> print(ldgsts_wavefronts(4, rows, cols), ldgsts_range(4, rows, cols))
None (4, 8)
"""

from __future__ import annotations

import numpy as np
from bankproof.models.hardware import LANES, LINE_BYTES, instruction, phase_ids, wavefront_counts

_STORE = {4: "st32", 8: "st64", 16: "st128"}
_LOAD = {4: "ld32", 8: "ld64", 16: "ld128"}


def conflict_pairs(name: str, offsets: np.ndarray, active: np.ndarray) -> set[tuple[int, int]]:
    """Lane pairs ``(i, j)``, ``i < j``, of one phase of instruction ``name`` that touch one bank at
    different words."""
    ins = instruction(name)
    phase = phase_ids(ins, offsets[None], active[None])[0]
    touched: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (phase, bank) -> (lane, word)
    for lane in np.flatnonzero(active).tolist():
        for word in ins.words(int(offsets[lane])):
            touched.setdefault((int(phase[lane]), word % 32), []).append((lane, word))
    out = set()
    for hits in touched.values():
        for a in range(len(hits)):
            for b in range(a + 1, len(hits)):
                if hits[a][1] != hits[b][1] and hits[a][0] != hits[b][0]:
                    out.add((min(hits[a][0], hits[b][0]), max(hits[a][0], hits[b][0])))
    return out


def _sides(width: int, shared_offsets, global_offsets, active):
    """The shared side's and the global side's wavefronts, their conflict pairs, or ``None``."""
    shared = np.asarray(shared_offsets, dtype=np.int64)
    act = np.ones(LANES, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if len(set(shared[act].tolist())) < int(act.sum()):
        return None  # lanes writing one shared address are serialized: not measured
    on_shared = int(wavefront_counts(instruction(_STORE[width]), shared[None], act[None])[0])
    glob = np.asarray(global_offsets, dtype=np.int64)
    reads = act & (glob >= 0)  # a zero-fill lane (src-size 0) reads nothing
    if not reads.any():
        return on_shared, 0, set(), set()
    glob = np.where(reads, glob, glob[reads][0])
    _, line = np.unique(glob // LINE_BYTES, return_inverse=True)  # the lines renumbered: banks kept
    glob = line * LINE_BYTES + glob % LINE_BYTES
    on_global = int(wavefront_counts(instruction(_LOAD[width]), glob[None], reads[None])[0])
    return (on_shared, on_global, conflict_pairs(_STORE[width], shared, act),
            conflict_pairs(_LOAD[width], glob, reads))  # fmt: skip


def ldgsts_wavefronts(
    width: int, shared_offsets, global_offsets, active=None, bypass: bool = False
) -> int | None:
    """Shared-side wavefronts of one ``.ca`` copy of ``width`` bytes per lane: the larger side's
    where the sides' conflicts nest, else ``None`` (crossing: see :func:`ldgsts_range`; lanes
    writing one shared address; ``.cg``, whose shared wavefronts Nsight Compute does not report)."""
    sides = None if bypass else _sides(width, shared_offsets, global_offsets, active)
    if sides is None:
        return None
    s, g, ps, pg = sides
    return max(s, g) if ps <= pg or pg <= ps else None


def ldgsts_range(width: int, shared_offsets, global_offsets, active=None) -> tuple[int, int] | None:
    """The measured bounds of one ``.ca`` copy: ``(n, n)`` where the sides nest, else the larger
    side and the sum of both (crossing conflicts)."""
    sides = _sides(width, shared_offsets, global_offsets, active)
    if sides is None:
        return None
    s, g, ps, pg = sides
    return (max(s, g), max(s, g)) if ps <= pg or pg <= ps else (max(s, g), s + g)
