"""What an access's warp instructions cost, summed (:class:`Tally`): the engines' input, whether
the instructions were counted one by one (:func:`of_count`, :func:`streamed`) or as one row that
stands for all of them (:func:`uniform`). On a linear memory layout every instruction is
instruction 0's lane addresses XOR a constant with no bits below the vector: banks are permuted
and equal words stay equal, so the phase model counts each alike and one row gives the total
(``tests/test_verify_linear.py`` checks it against enumeration).

>>> from bankproof.models.notation import parse_layout
>>> from bankproof.models.access_linear import linear_access
>>> d = parse_layout('{"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}', [2, 32])
>>> a = linear_access(d.layout, parse_layout("32*m + n", [2, 32]).layout, 32, "load")
>>> t = uniform("sm90", a)
>>> (t.instructions, t.total, t.ideal, t.first_over) == (2, 2, 2, None) == streamed("sm90", a)[:4]
True
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from bankproof.models import hardware, target
from bankproof.models.access_linear import LinearAccess
from bankproof.models.hardware import LANES

BATCH_ROWS = 1 << 12  # instructions counted per batch from bases (one batch stays in cache: 2x 2^14's speed)


class Tally(NamedTuple):
    """``instructions`` warp instructions costing ``total`` wavefronts (cycles of lane groups)
    where ``ideal`` is the conflict-free cost; ``first_over`` the lowest instruction costing more
    than its ideal (``over``: its count and ideal), ``first`` instruction 0's count and ideal,
    ``worst`` the most any one costs; ``known`` False where the model cannot say (``reason``);
    ``status`` what the answer rests on; ``rule`` the lane-group rule in words."""

    instructions: int
    total: int
    ideal: int
    first_over: int | None
    over: tuple[int, int]
    first: tuple[int, int]
    worst: int
    known: bool
    status: str
    reason: str | None = None
    rule: str | None = None


def of_count(c: target.Count) -> Tally:
    """The tally of instructions counted one by one."""
    n = len(c.counts)
    bad = np.flatnonzero(c.counts > c.ideals)
    i = int(bad[0]) if len(bad) else None
    return Tally(
        instructions=n,
        total=int(c.counts.sum()),
        ideal=int(c.ideals.sum()),
        first_over=i,
        over=(int(c.counts[i]), int(c.ideals[i])) if i is not None else (0, 0),
        first=(int(c.counts[0]), int(c.ideals[0])) if n else (0, 0),
        worst=int(c.counts.max()) if n else 0,
        known=c.known,
        status=c.status,
        reason=c.reason,
        rule=c.rule,
    )


def uniform(arch: str, a: LinearAccess) -> Tally:
    """The tally from instruction 0 alone (every instruction of a linear access costs the same)."""
    row = a.row()[None]
    c = target.count_rows(arch, a.instr, row, np.ones(row.shape, dtype=bool), check=False)
    k, ideal, n = int(c.counts[0]), int(c.ideals[0]), a.instructions
    over = k > ideal
    return Tally(n, k * n, ideal * n, 0 if over else None, (k, ideal) if over else (0, 0), (k, ideal), k,
                 c.known, c.status, c.reason)  # fmt: skip


def streamed(arch: str, a: LinearAccess, batch: int = BATCH_ROWS) -> Tally:
    """The tally of every instruction counted one by one through the hardware model, their
    addresses built from the bases a batch at a time (no element tables; memory bounded by the
    batch)."""
    n = a.instructions
    total = ideal = worst = 0
    first_over, over, first, known, reason = None, (0, 0), (0, 0), True, None
    status = target.status(arch, a.instr)
    row = a.row()
    words = _words_path(a, row)
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        if words is not None:  # one phase, a word a lane, never unmeasured: counted as words
            w = (a.constants(start, stop) >> 2).astype(np.int32)[:, None] ^ words[None, :]
            counts = hardware.one_phase_counts(w)[0]
            most, ideals = int(counts.max()), None  # ideal: one wavefront each
        else:
            rows = a.rows(start, stop)
            c = target.count_rows(arch, a.instr, rows, _ones(len(rows)), check=False)
            counts, ideals, status, most = c.counts, c.ideals, c.status, int(c.counts.max())
            if not c.known:
                known, reason = False, c.reason
        if start == 0:
            first = (int(counts[0]), 1 if ideals is None else int(ideals[0]))
        if first_over is None and (most > 1 if ideals is None else (counts > ideals).any()):
            j = int((counts > (1 if ideals is None else ideals)).argmax())
            first_over, over = start + j, (int(counts[j]), 1 if ideals is None else int(ideals[j]))
        total += int(counts.sum())
        ideal += stop - start if ideals is None else int(ideals.sum())
        worst = max(worst, most)
    return Tally(n, total, ideal, first_over, over, first, worst, known, status, reason)


@functools.lru_cache(maxsize=16)
def _ones(n: int) -> np.ndarray:
    """All 32 lanes of ``n`` instructions active (kept: every access asks for the same few)."""
    out = np.ones((n, LANES), dtype=bool)
    out.setflags(write=False)
    return out


def _words_path(a: LinearAccess, row: np.ndarray) -> np.ndarray | None:
    """Instruction 0's lane words (int32) where every instruction is one phase of 32 one-word
    lanes that the model always measures (``ld``/``st`` of at most 4 bytes), else None."""
    ins = a.instr
    if ins.is_matrix or ins.width > hardware.BANK_BYTES:
        return None
    if max([int(row.max()), *a.columns]).bit_length() > 32:
        return None
    return (row >> 2).astype(np.int32)
