"""The tensor's bit space, row-major: the packing the algebra works in. A vector is a tensor
coordinate packed into an int, the last dim's bits lowest (``n0 .. n4`` before ``m0 .. m3`` for a
``[16, 32]`` tensor), the order the seeds use.

>>> from bankproof.models.layout import LinearLayout
>>> s = Space.of(LinearLayout.from_bases({}, {"m": 4, "n": 2}))
>>> s.names, s.name(0b101)
(('n0', 'm0', 'm1'), 'n0⊕m1')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bankproof.models.errors import log2
from bankproof.models.layout import LinearLayout


@dataclass(frozen=True)
class Space:
    """The tensor's bit space, row-major: bit k of a packed vector is ``names[k]``."""

    dims: tuple[tuple[str, int], ...]  # (out dim name, size) in layout order
    names: tuple[str, ...]  # bit names, row-major (last dim first)

    @staticmethod
    def of(layout: LinearLayout, dim_names: Sequence[str] | None = None) -> Space:
        labels = list(dim_names) if dim_names else [n for n, _ in layout.out_dims]
        names = []
        for (_, size), label in reversed(list(zip(layout.out_dims, labels))):
            names += [f"{label}{i}" for i in range(log2(size))]
        return Space(layout.out_dims, tuple(names))

    @property
    def bits(self) -> int:
        return len(self.names)

    def pack_row_major(self, coords: Sequence[int]) -> int:
        """Coordinates -> one int, the last dim in the lowest bits (row-major, the algebra's
        order; :meth:`LinearLayout.pack_dim0_lowest` is Triton's, first dim lowest).

        >>> lay = LinearLayout.from_bases({}, {"a": 4, "b": 2})
        >>> Space.of(lay).pack_row_major([1, 1]), lay.pack_dim0_lowest([1, 1])
        (3, 5)
        """
        v, shift = 0, 0
        for c, (_, size) in reversed(list(zip(coords, self.dims))):
            v |= int(c) << shift
            shift += log2(size)
        return v

    def unpack_row_major(self, v: int) -> tuple[int, ...]:
        """Inverse of :meth:`pack_row_major`."""
        out = []
        for _, size in reversed(self.dims):
            out.append(v & (size - 1))
            v >>= log2(size)
        return tuple(reversed(out))

    def name(self, v: int) -> str:
        """``n1⊕m0``-style name of a vector; ``0`` for zero."""
        parts = [self.names[k] for k in range(self.bits) if (v >> k) & 1]
        return "⊕".join(parts) if parts else "0"
