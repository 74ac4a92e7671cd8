"""Memory layouts that are not linear: padded shared memory.

``PaddedLayout`` pairs a linear component (unpadded offset -> tensor coordinates) with padding:
after every ``interval`` elements, ``pad`` unused elements are inserted (Triton's
``padded_shared``). The physical element offset of unpadded offset ``x`` is
``x + sum_k (x // interval_k) * pad_k``.

>>> from bankproof.models.layout import LinearLayout
>>> P = PaddedLayout(LinearLayout.identity1d(64, "offset", "dim0"), ((32, 4),))
>>> P.physical_offsets()[[0, 31, 32, 63]].tolist()
[0, 31, 36, 67]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models import f2
from bankproof.models.errors import InputError, log2
from bankproof.models.kept import kept
from bankproof.models.layout import LinearLayout


@dataclass(frozen=True)
class PaddedLayout:
    """A linear component plus ``(interval, pad)`` pairs, all in elements.

    Requires (checked where one is built: :func:`padded_from_offsets`): every interval a power of
    two, pads non-negative. Postcondition of :meth:`physical_offsets`: strictly increasing."""

    linear: LinearLayout
    intervals: tuple[tuple[int, int], ...]

    def physical_offsets(self) -> np.ndarray:
        """Physical element offset of every unpadded offset ``0 .. 2**bits - 1``."""
        x = np.arange(1 << len(self.linear.in_bases("offset")), dtype=np.int64)
        out = x.copy()
        for interval, pad in self.intervals:
            out += (x // interval) * pad
        return out

    def span(self) -> int:
        """Elements of shared memory the buffer occupies, padding included."""
        return int(self.physical_offsets()[-1]) + 1


def memory_from_offsets(off: np.ndarray, where: str) -> LinearLayout | PaddedLayout:
    """Element offsets of every coordinate -> the memory layout: F2-linear when the offsets fill
    ``[0, size)``, else a linear layout with padding (:func:`padded_from_offsets`).

    Requires: ``off`` holds one distinct non-negative offset per coordinate (the tensor's shape).
    Postcondition: the result maps every coordinate to exactly its offset in ``off``.

    >>> rows, cols = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    >>> memory_from_offsets(rows * 12 + cols, "cute").intervals
    ((8, 4),)
    """
    flat = off.reshape(-1)
    if flat.size and flat.min() >= 0 and flat.max() < flat.size:
        return layout_from_offsets(off, where)
    return padded_from_offsets(off, where)


def padded_from_offsets(off: np.ndarray, where: str) -> PaddedLayout:
    """Offsets that skip elements (a CuTe stride of 132, Triton's ``padded_shared``) -> the one
    :class:`PaddedLayout` that gives exactly these offsets, or an ``InputError`` saying why none
    does. Padding keeps order, so a coordinate's unpadded offset is its offset's rank among all
    offsets: the linear part is ``coordinate -> rank`` (checked F2-linear), and the padding of each
    power-of-two interval is read off the jump in offsets at that rank (checked at every rank).

    Requires: ``off`` is strictly increasing in rank order (padding keeps order) and its ranks are
    F2-linear in the coordinate bits.
    Postcondition: ``result.physical_offsets()`` at each coordinate's rank is its offset in ``off``.

    >>> padded_from_offsets(np.array([[0, 1], [3, 4]]), "t").intervals
    ((2, 1),)
    >>> padded_from_offsets(np.array([[0, 1], [3, 5]]), "t")
    Traceback (most recent call last):
    ...
    bankproof.models.errors.InputError: t: layout is neither a bijection onto [0, 4) nor a linear layout \
with padding after power-of-two intervals (the offset of rank 3 is 5, where such padding puts 4)
    """
    flat = off.reshape(-1)
    n = flat.size
    low = int(flat.min()) if n else 0
    if low != 0:
        raise InputError(where, "layout", f"must start at offset 0 (its lowest offset is {low})")
    order = np.argsort(flat, kind="stable")
    phys = flat[order]
    if np.any(phys[1:] == phys[:-1]):
        raise InputError(where, "layout", f"maps two coordinates to one offset ({_duplicate(off)})")
    extra = phys - np.arange(n, dtype=np.int64)
    intervals: list[tuple[int, int]] = []
    step = 1
    while step < n:
        pad = int(extra[step] - extra[step - 1]) - sum(p for _, p in intervals)
        if pad < 0:  # no padding gives a smaller jump here than at a smaller interval
            break
        if pad:
            intervals.append((step, pad))
        step *= 2
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    neither = (
        f"is neither a bijection onto [0, {n}) nor a linear layout with padding after power-of-two intervals"
    )
    try:
        linear = layout_from_offsets(rank.reshape(off.shape), where)
    except InputError as e:
        why = e.problem.replace("is not", "are not", 1)
        raise InputError(where, "layout", f"{neither} (in offset order, its coordinates {why})") from None
    padded = PaddedLayout(linear, tuple(intervals))
    got = padded.physical_offsets()
    bad = np.nonzero(got != phys)[0]
    if len(bad):
        x = int(bad[0])
        raise InputError(
            where,
            "layout",
            f"{neither} (the offset of rank {x} is {int(phys[x])}, where such padding puts {int(got[x])})",
        )
    return padded


def layout_from_offsets(off: np.ndarray, where: str) -> LinearLayout:
    """Element offsets of every coordinate (array of the tensor's shape) -> the memory layout
    ``offset -> dims``, checking it is an F2-linear bijection onto ``[0, size)``: every offset is
    the XOR of its coordinate bits' offsets (one vectorized pass), and those are independent and
    below the size; the inverse is one elimination (``f2.preimages``).

    Requires: ``off`` is a bijection onto ``[0, size)`` that is F2-linear in the coordinate bits.
    Postcondition: ``result.apply(offset=off[c])`` is ``c`` for every coordinate ``c``."""
    shape = off.shape
    n = off.size
    dims = [f"dim{i}" for i in range(len(shape))]
    units = []
    for d, size in enumerate(shape):
        for i in range(log2(size)):
            idx = [0] * len(shape)
            idx[d] = 1 << i
            units.append(tuple(idx))
    images = [int(off[u]) for u in units]
    acc = np.zeros(shape, dtype=np.int64)
    k = 0
    for d, size in enumerate(shape):
        line = np.arange(size, dtype=np.int64)
        part = np.zeros(size, dtype=np.int64)
        for i in range(log2(size)):
            part ^= ((line >> i) & 1) * images[k]
            k += 1
        view = [1] * len(shape)
        view[d] = size
        acc ^= part.reshape(view)
    linear = np.array_equal(acc, off)
    if not linear or any(not 0 <= v < n for v in images) or f2.rank(images) != log2(n):
        flat = off.reshape(-1)
        if flat.min() < 0 or flat.max() >= n or len(np.unique(flat)) != n:
            bad = _first_problem(off)
            raise InputError(where, "layout", f"is not a bijection onto [0, {n}) ({bad})")
        where_bad = tuple(int(x[0]) for x in np.nonzero(acc != off))
        raise InputError(
            where,
            "layout",
            f"is not linear over F2: offset of {where_bad} is {int(off[where_bad])}, "
            f"the XOR of its bits' offsets is {int(acc[where_bad])}",
        )
    coords = LinearLayout((), tuple(zip(dims, shape)))
    bases = [coords.unpack_dim0_lowest(x) for x in f2.preimages(images, log2(n))]
    return LinearLayout.from_bases({"offset": bases}, dict(zip(dims, shape)))


def _first_problem(off: np.ndarray) -> str:
    flat = off.reshape(-1)
    n = flat.size
    idx = np.argwhere((off < 0) | (off >= n))
    if len(idx):
        c = tuple(int(v) for v in idx[0])
        return f"coordinate {c} has offset {int(off[c])}"
    return _duplicate(off)


def _duplicate(off: np.ndarray) -> str:
    flat = off.reshape(-1)
    _, first, counts = np.unique(flat, return_index=True, return_counts=True)
    dup = flat[first[counts > 1][0]]
    both = np.argwhere(off == dup)[:2]
    a, b = (tuple(int(v) for v in both[i]) for i in range(2))
    return f"coordinates {a} and {b} share offset {int(dup)}"


@kept(64)
def inverse_columns(memory: LinearLayout) -> tuple[int, ...] | None:
    """The element offset of each packed coordinate bit (first out dim lowest) under a linear
    memory layout's inverse, or None when its offsets do not map one-to-one onto the tensor.

    Requires: a memory layout (input dim ``offset``).
    Postcondition: when not ``None``, the offset whose bits XOR these columns maps back to the
    coordinate (the inverse's columns, ``memory.apply(offset=...)`` undoing it).

    >>> m = LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> inverse_columns(m)
    (2, 1)
    """
    inverse = f2.inverse(memory.packed("offset"), memory.out_bits)  # None: not one-to-one
    return None if inverse is None else tuple(inverse)
