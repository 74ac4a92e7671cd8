"""Linear layouts: F2-linear maps from named input dims to named, sized output dims.

A layout is given by its *bases*: for every input dim (``register``, ``lane``, ``warp``, ``block``
for distributed layouts; ``offset`` and ``block`` for memory layouts) the image of each input bit,
written as coordinates ``[dim0, dim1, ...]`` of the output dims. The image of any input is the XOR
of the images of its set bits (Linear Layouts paper, Def 4.1).

    >>> L = LinearLayout.from_bases({"lane": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> L.apply(lane=3)
    {'dim0': 1, 'dim1': 1}

Conventions follow Triton's ``LinearLayout`` so that bases print identically: the first input dim
and the first output dim are the most minor when flattened.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from bankproof.models import f2
from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout_algebra import LayoutAlgebra

Basis = tuple[int, ...]
DISTRIBUTED_DIMS = ("register", "lane", "warp", "block")
MEMORY_DIMS = ("offset", "block")


MAX_TABLE_BITS = 24  # points a layout's table may have (2^24 x rank int64: 128 MB a dim)


@dataclass(frozen=True)
class LinearLayout(LayoutAlgebra):
    """An F2-linear map ``in_dims -> out_dims``; see the module docstring.

    ``bases`` maps each input dim name to the images of its bits (in order); ``out_dims`` is the
    ordered list of (name, size) output dims. Sizes are powers of two.
    """

    bases: tuple[tuple[str, tuple[Basis, ...]], ...]
    out_dims: tuple[tuple[str, int], ...]

    def __hash__(self) -> int:  # kept: layouts key the caches of every stage
        if "_hash" not in self.__dict__:
            object.__setattr__(self, "_hash", hash((self.bases, self.out_dims)))
        return self.__dict__["_hash"]

    def __getstate__(self) -> dict:  # a string's hash differs between processes: not carried
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    # ----- construction -------------------------------------------------------------------
    @staticmethod
    def from_bases(
        bases: Mapping[str, Sequence[Sequence[int]]],
        out_dims: Mapping[str, int] | Sequence[str],
    ) -> LinearLayout:
        """Build from ``{in_dim: [[c0, c1, ...], ...]}``. ``out_dims`` is either
        ``{name: size}`` or a list of names whose sizes are inferred (the smallest power of two
        above every coordinate, as Triton does).

        >>> LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, ["dim0", "dim1"]).out_dims
        (('dim0', 2), ('dim1', 2))
        """
        if isinstance(out_dims, Mapping):
            dims = [(str(k), int(v)) for k, v in out_dims.items()]
        else:
            names = list(out_dims)
            sizes = [1] * len(names)
            for bs in bases.values():
                for b in bs:
                    for i, c in enumerate(b[: len(names)]):
                        if c > 0:
                            sizes[i] = max(sizes[i], 1 << int(c).bit_length())
            dims = list(zip(names, sizes))
        norm = tuple((str(d), tuple(tuple(int(c) for c in b) for b in bs)) for d, bs in bases.items())
        layout = LinearLayout(norm, tuple(dims))
        problems = layout.check()
        if problems:
            raise problems[0]
        return layout

    @staticmethod
    def identity1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """Identity ``in_dim -> out_dim`` of the given size.

        >>> LinearLayout.identity1d(4, "lane", "dim0").bases
        (('lane', ((1,), (2,))),)
        """
        return LinearLayout(((in_dim, tuple((1 << i,) for i in range(log2(size)))),), ((out_dim, size),))

    @staticmethod
    def zeros1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """Map every ``in_dim`` input to 0 of a size-1 ``out_dim`` (broadcast).

        >>> LinearLayout.zeros1d(4, "warp", "dim1").bases
        (('warp', ((0,), (0,))),)
        """
        return LinearLayout(((in_dim, tuple((0,) for _ in range(log2(size)))),), ((out_dim, 1),))

    @staticmethod
    def empty() -> LinearLayout:
        """The layout with no dims (the unit of :meth:`product`)."""
        return LinearLayout((), ())

    # ----- queries --------------------------------------------------------------------------
    @cached_property
    def _bases(self) -> dict[str, tuple[Basis, ...]]:
        return dict(self.bases)

    @property
    def in_dim_names(self) -> list[str]:
        return [d for d, _ in self.bases]

    @property
    def out_dim_names(self) -> list[str]:
        return [d for d, _ in self.out_dims]

    def in_bases(self, in_dim: str) -> tuple[Basis, ...]:
        """The images of ``in_dim``'s bits (empty when the dim is absent)."""
        return self._bases.get(in_dim, ())

    def in_dim_size(self, in_dim: str) -> int:
        return 1 << len(self.in_bases(in_dim))

    def out_dim_size(self, out_dim: str) -> int:
        return dict(self.out_dims)[out_dim]

    @property
    def in_bits(self) -> int:
        return sum(len(b) for _, b in self.bases)

    @property
    def out_bits(self) -> int:
        return sum(log2(s) for _, s in self.out_dims)

    def as_dict(self) -> dict[str, list[list[int]]]:
        """Bases as plain lists, for JSON: ``{in_dim: [[c0, c1, ...], ...]}``."""
        return {d: [list(b) for b in bs] for d, bs in self.bases}

    @cached_property
    def text(self) -> str:
        """:meth:`as_dict` as text (kept: a layout given to many calls is printed once)."""
        return str(self.as_dict())

    # ----- flat (int) view ------------------------------------------------------------------
    @cached_property
    def _shifts(self) -> list[int]:
        shifts, s = [], 0
        for _, size in self.out_dims:
            shifts.append(s)
            s += log2(size)
        return shifts

    def pack_dim0_lowest(self, coords: Sequence[int]) -> int:
        """Output coordinates -> one int, first out dim in the lowest bits.

        >>> LinearLayout.from_bases({}, {"a": 4, "b": 2}).pack_dim0_lowest([3, 1])
        7
        """
        return sum(int(c) << s for c, s in zip(coords, self._shifts))

    def packed(self, in_dim: str) -> list[int]:
        """:meth:`pack_dim0_lowest` of each of ``in_dim``'s bases (one pass per out dim).

        >>> LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, {"a": 2, "b": 2}).packed("offset")
        [2, 1]
        """
        bs = self.in_bases(in_dim)
        cols = [0] * len(bs)
        for d, s in enumerate(self._shifts):
            cols = [c | int(b[d]) << s for c, b in zip(cols, bs)]
        return cols

    def unpack_dim0_lowest(self, v: int) -> tuple[int, ...]:
        """Inverse of :meth:`pack_dim0_lowest`."""
        return tuple((v >> s) & (size - 1) for s, (_, size) in zip(self._shifts, self.out_dims))

    @cached_property
    def columns(self) -> list[int]:
        """The matrix columns: packed image of every input bit, in-dims in order."""
        return [self.pack_dim0_lowest(b) for _, bs in self.bases for b in bs]

    def in_offset(self, in_dim: str) -> int:
        """Position of ``in_dim``'s bit 0 among all input bits."""
        pos = 0
        for d, bs in self.bases:
            if d == in_dim:
                return pos
            pos += len(bs)
        raise KeyError(in_dim)

    # ----- evaluation -----------------------------------------------------------------------
    def apply(self, **inputs: int) -> dict[str, int]:
        """Image of one input point; missing input dims are 0.

        >>> LinearLayout.identity1d(8, "offset", "dim0").apply(offset=5)
        {'dim0': 5}
        """
        acc = [0] * len(self.out_dims)
        for d, bs in self.bases:
            x = int(inputs.get(d, 0))
            if x >> len(bs):
                raise InputError("layout", d, f"must be < {1 << len(bs)}", x)
            for i, b in enumerate(bs):
                if (x >> i) & 1:
                    acc = [a ^ c for a, c in zip(acc, b)]
        return dict(zip(self.out_dim_names, acc))

    def apply_arrays(self, **inputs: np.ndarray | int) -> dict[str, np.ndarray]:
        """Vectorized :meth:`apply`: each input dim an integer array (broadcast together).

        >>> L = LinearLayout.identity1d(4, "lane", "dim0")
        >>> L.apply_arrays(lane=np.arange(4))["dim0"].tolist()
        [0, 1, 2, 3]
        """
        arrays = {d: np.asarray(inputs.get(d, 0), dtype=np.int64) for d, _ in self.bases}
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
        out = [np.zeros(shape, dtype=np.int64) for _ in self.out_dims]
        for d, bs in self.bases:
            x = arrays[d]
            for i, b in enumerate(bs):
                bit = (x >> i) & 1
                for k, c in enumerate(b):
                    if c:
                        out[k] ^= bit * c
        return dict(zip(self.out_dim_names, out))

    def table(self) -> np.ndarray:
        """Outputs for every input, shape ``(2**in_bits, n_out)``; row index = flat input
        (first in-dim minor).

        >>> LinearLayout.identity1d(4, "lane", "dim0").table()[:, 0].tolist()
        [0, 1, 2, 3]
        """
        n = self.in_bits
        if n > MAX_TABLE_BITS:
            why = f"is too large to enumerate (limit 2^{MAX_TABLE_BITS} points; verify answers from bases)"
            raise InputError("layout", "input", why, f"2^{n}")
        return element_table(self)

    def transpose_outs(self, names: Sequence[str]) -> LinearLayout:
        """Reorder the output dims (the bases' coordinates follow).

        >>> L = LinearLayout.from_bases({"lane": [[0, 1]]}, {"dim0": 1, "dim1": 2})
        >>> L.transpose_outs(["dim1", "dim0"]).in_bases("lane")
        ((1, 0),)
        """
        idx = [self.out_dim_names.index(n) for n in names]
        if sorted(idx) != list(range(len(self.out_dims))):
            raise InputError("transpose_outs", "names", "must be a permutation of the out dims", list(names))
        bases = tuple((d, tuple(tuple(b[i] for i in idx) for b in bs)) for d, bs in self.bases)
        return LinearLayout(bases, tuple(self.out_dims[i] for i in idx))

    def transpose_ins(self, names: Sequence[str]) -> LinearLayout:
        """Reorder the input dims."""
        if sorted(names) != sorted(self.in_dim_names):
            raise InputError("transpose_ins", "names", "must be a permutation of the in dims", list(names))
        return LinearLayout(tuple((d, self.in_bases(d)) for d in names), self.out_dims)

    def with_in_bases(self, in_dim: str, bases: Sequence[Basis]) -> LinearLayout:
        """A copy with ``in_dim``'s bases replaced (the dim is appended if new)."""
        new = dict(self.bases)
        new[in_dim] = tuple(tuple(b) for b in bases)
        return LinearLayout(tuple(new.items()), self.out_dims)

    def flatten_outs(self, name: str | None = None) -> LinearLayout:
        """Merge all output dims into one, the first out dim most minor (Triton's convention).

        >>> L = LinearLayout.from_bases({"offset": [[1, 0], [0, 1]]}, {"dim0": 2, "dim1": 2})
        >>> L.flatten_outs("x").in_bases("offset")
        ((1,), (2,))
        """
        name = name or (self.out_dim_names[0] if self.out_dims else "dim0")
        bases = tuple((d, tuple((self.pack_dim0_lowest(b),) for b in bs)) for d, bs in self.bases)
        return LinearLayout(bases, ((name, 1 << self.out_bits),))

    def reshape_outs(self, new_dims: Sequence[tuple[str, int]]) -> LinearLayout:
        """Re-split the flattened output (first dim most minor) into ``new_dims``.

        >>> L = LinearLayout.identity1d(8, "offset", "x").reshape_outs([("a", 2), ("b", 4)])
        >>> L.in_bases("offset")
        ((1, 0), (0, 1), (0, 2))
        """
        flat = self.flatten_outs()
        total = 1
        for _, s in new_dims:
            if not is_pow2(s):
                raise InputError("reshape_outs", "size", "must be a power of two", s)
            total *= s
        if total != 1 << self.out_bits:
            raise InputError("reshape_outs", "sizes", f"must multiply to {1 << self.out_bits}", total)
        tmpl = LinearLayout((), tuple((n, s) for n, s in new_dims))
        bases = tuple((d, tuple(tmpl.unpack_dim0_lowest(b[0]) for b in bs)) for d, bs in flat.bases)
        return LinearLayout(bases, tmpl.out_dims)

    def reshape_row_major(self, shape: Sequence[int]) -> LinearLayout:
        """Reshape the output like ``numpy.reshape`` (last dim fastest), to ``dim0, dim1, ...``.

        >>> L = LinearLayout.identity1d(8, "offset", "dim0").reshape_row_major([2, 4])
        >>> L.in_bases("offset")
        ((0, 1), (0, 2), (1, 0))
        """
        rev = list(reversed(self.out_dim_names))
        new = [(f"dim{i}", s) for i, s in enumerate(shape)]
        out = self.transpose_outs(rev).reshape_outs(list(reversed(new)))
        return out.transpose_outs([n for n, _ in new])

    # ----- properties -----------------------------------------------------------------------
    @cached_property
    def rank(self) -> int:
        return f2.rank(self.columns)

    def is_injective(self) -> bool:
        """No two inputs share an image (no zero or repeated combination)."""
        return self.rank == self.in_bits

    def is_surjective(self) -> bool:
        """Every output point is reached."""
        return self.rank == self.out_bits

    def is_invertible(self) -> bool:
        return self.is_injective() and self.is_surjective()

    def zero_bases(self, in_dim: str) -> list[int]:
        """Indices of ``in_dim``'s bits that map to 0 (broadcast: those inputs share data)."""
        return [i for i, b in enumerate(self.in_bases(in_dim)) if not any(b)]

    def free_masks(self) -> dict[str, int]:
        """Per in-dim, the bits whose image the earlier bits (register, lane, warp, block order)
        already span: the inputs that hold copies of others' elements. Triton's
        ``getFreeVariableMasks``; its lowering predicates off lanes and warps with such a bit set
        and skips such registers when it copies or stores (one writer per element).

        >>> L = LinearLayout.from_bases({"register": [[1]], "lane": [[0], [2], [1]]}, {"dim0": 4})
        >>> L.free_masks()
        {'register': 0, 'lane': 5}
        """
        basis: list[int] = []
        out = {}
        for dim, _ in self.bases:
            mask = 0
            for i, col in enumerate(self.packed(dim)):
                if f2.in_span(col, basis):
                    mask |= 1 << i
                else:
                    basis = f2.extend(basis, col)
            out[dim] = mask
        return out

    def contiguous_registers(self, out_dim: str | None = None) -> int:
        """Largest 2^k such that register bits 0..k-1 map to 1, 2, ..., 2^(k-1) along ``out_dim``
        (default: the last out dim, the fastest one in row-major order) and 0 elsewhere (§5.1).

        >>> L = LinearLayout.from_bases({"register": [[0, 1], [0, 2], [1, 0]]}, {"dim0": 2, "dim1": 4})
        >>> L.contiguous_registers()
        4
        """
        out_dim = out_dim or self.out_dim_names[-1]
        k = self.out_dim_names.index(out_dim)
        n = 0
        for b in self.in_bases("register"):
            want = tuple((1 << n) if i == k else 0 for i in range(len(b)))
            if b != want:
                break
            n += 1
        return 1 << n


@functools.lru_cache(maxsize=64)
def element_table(layout: LinearLayout) -> np.ndarray:
    """:meth:`LinearLayout.table`, kept for the last layouts (read-only): a search enumerates
    many accesses of the same layouts."""
    # Doubling: the table for bits 0..k is the table for bits 0..k-1, then it XOR image k.
    acc = np.zeros((1, len(layout.out_dims)), dtype=np.int64)
    for _, bs in layout.bases:
        for b in bs:
            acc = np.concatenate([acc, acc ^ np.asarray(b, dtype=np.int64)])
    acc.setflags(write=False)
    return acc
