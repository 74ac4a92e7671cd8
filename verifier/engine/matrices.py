"""The matrix view of a layout (seed 000): rows are the tensor's bits, columns are the layout's
input bits (offset bits of a memory layout; register, lane, warp and block bits of a distributed
one); a 1 in row ``m0`` and column ``l3`` says "flipping lane bit 3 flips m0". Composition is a
matrix product and conflicts are subspace intersections, so this is the picture the proofs read.
Drawing them is :mod:`bankproof.verifier.render.matrix`'s job.

>>> from bankproof.models.layout import LinearLayout
>>> mem = LinearLayout.from_bases({"offset": [[0, 1], [1, 1]]}, {"dim0": 2, "dim1": 2})
>>> m = memory_matrix(mem, ["m", "n"], 8)
>>> m.rows, m.groups, [m.cell(0, 1), m.cell(1, 0)]
(('n0', 'm0'), (('word', ('o0', 'o1')),), [1, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bankproof.models.errors import log2
from bankproof.models.hardware import BANK_BYTES, BANKS
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.space import Space


@dataclass(frozen=True)
class Matrix:
    """A 0/1 matrix with named rows (tensor bits) and named column groups (input bits)."""

    title: str
    rows: tuple[str, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...]  # (group name, column labels)
    columns: tuple[int, ...]  # packed tensor-bit vector of each column, in group order

    def cell(self, row: int, col: int) -> int:
        return (self.columns[col] >> row) & 1


def _columns(layout: LinearLayout, space: Space, in_dim: str) -> list[int]:
    return [space.pack_row_major(b) for b in layout.in_bases(in_dim)]


def memory_matrix(
    memory: LinearLayout | PaddedLayout,
    dims: Sequence[str],
    elem_bits: int,
    roles: Sequence[tuple[str, int]] = (),
) -> Matrix:
    """Offset bits ``o0, o1, ...`` -> tensor bits, the offset bits grouped by what they select
    in a shared memory of 4-byte banks: a byte within a word, the bank, the 128-byte segment;
    or by ``roles``, ``(name, how many bits)`` from the lowest offset bit up."""
    padded = isinstance(memory, PaddedLayout)
    lin = memory.linear if padded else memory
    space = Space.of(lin, dims)
    cols = _columns(lin, space, "offset")
    if not roles:  # what each offset bit selects in the byte address
        shift = log2(elem_bits) - 3  # log2 of the element's bytes; negative for sub-byte elements
        word_bits, segment_bit = log2(BANK_BYTES), log2(BANK_BYTES * BANKS)
        count = {"word": 0, "bank": 0, "segment": 0}
        for i in range(len(cols)):
            byte_bit = i + shift
            count["word" if byte_bit < word_bits else "bank" if byte_bit < segment_bit else "segment"] += 1
        roles = list(count.items())
    assert sum(n for _, n in roles) == len(cols), "roles must cover every offset bit"
    starts = [sum(n for _, n in roles[:i]) for i in range(len(roles))]
    groups = tuple(
        (name, tuple(f"o{i}" for i in range(s, s + n))) for (name, n), s in zip(roles, starts) if n
    )
    title = f"memory layout: offset bits -> tensor bits ({elem_bits}-bit elements)"
    if padded:
        title += "; padding is not linear and not shown"
    return Matrix(title, space.names, groups, tuple(cols))


def access_matrix(layout: LinearLayout, dims: Sequence[str], name: str) -> Matrix:
    """Register/lane/warp/block bits -> tensor bits of an access's distributed layout."""
    space = Space.of(layout, dims)
    groups, cols = [], []
    for in_dim in layout.in_dim_names:
        c = _columns(layout, space, in_dim)
        if c:
            groups.append((in_dim, tuple(f"{in_dim[0]}{i}" for i in range(len(c)))))
            cols += c
    title = f"access {name!r}: register/lane/warp bits -> tensor bits"
    return Matrix(title, space.names, tuple(groups), tuple(cols))
