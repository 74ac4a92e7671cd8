"""The algebra of linear layouts (Linear Layouts paper §4): product, composition, inversion,
left division, and the validity conditions of distributed and memory layouts (Defs 4.10, 4.14).
:class:`~bankproof.models.layout.LinearLayout` has these as methods.

>>> from bankproof.models.layout import LinearLayout
>>> a = LinearLayout.identity1d(4, "lane", "dim0")
>>> a.compose(LinearLayout.from_bases({"dim0": [[2], [1]]}, {"offset": 4})).as_dict()
{'lane': [[2], [1]]}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from bankproof.models import f2
from bankproof.models.errors import InputError, is_pow2, log2


class LayoutAlgebra:
    """The algebra half of :class:`~bankproof.models.layout.LinearLayout` (a mixin: it relies on
    the layout's bases, dims and packing)."""

    # ----- algebra --------------------------------------------------------------------------
    def product(self, outer: Self) -> Self:
        """Triton's ``inner * outer`` (Def 4.3, extended to shared dims): ``outer``'s bits come
        after ``self``'s in every shared input dim, and its images are shifted past ``self``'s
        extent in every shared output dim. Disjoint dims give the block-diagonal product.

        Requires: the dims ``self`` and ``outer`` share appear in the same relative order in both.
        Postcondition: each input dim has ``self``'s bases then ``outer``'s; each output dim's size
        is the product of the two (1 where absent); ``result.divide_left(self) == outer`` where
        ``self`` covers its dims.

        >>> from bankproof.models.layout import LinearLayout
        >>> a = LinearLayout.identity1d(2, "register", "dim0")
        >>> a.product(LinearLayout.identity1d(4, "register", "dim0")).in_bases("register")
        ((1,), (2,), (4,))
        """
        out_names = _supremum(self.out_dim_names, outer.out_dim_names)
        in_names = _supremum(self.in_dim_names, outer.in_dim_names)
        inner_sizes = dict(self.out_dims)
        outer_sizes = dict(outer.out_dims)
        sizes = {n: inner_sizes.get(n, 1) * outer_sizes.get(n, 1) for n in out_names}

        def lift(layout: Self, b: tuple[int, ...], shift: bool) -> tuple[int, ...]:
            m = dict(zip(layout.out_dim_names, b))
            return tuple(m.get(n, 0) * (inner_sizes.get(n, 1) if shift else 1) for n in out_names)

        bases = []
        for d in in_names:
            row = [lift(self, b, False) for b in self.in_bases(d)]
            row += [lift(outer, b, True) for b in outer.in_bases(d)]
            bases.append((d, tuple(row)))
        return type(self)(tuple(bases), tuple((n, sizes[n]) for n in out_names))

    __mul__ = product

    def compose(self, outer: Self) -> Self:
        """``outer ∘ self`` (Def 4.2): self's output dims are outer's input dims, by name;
        each of self's coordinates is fed bitwise into outer.

        Requires: every output dim of ``self`` is an input dim of ``outer`` covering its values.
        Postcondition: ``result`` has ``self``'s input dims and ``outer``'s output dims, and
        ``result.apply(x) == outer.apply(self.apply(x))`` for every input ``x``.

        >>> from bankproof.models.layout import LinearLayout
        >>> a = LinearLayout.identity1d(4, "lane", "dim0")
        >>> b = LinearLayout.from_bases({"dim0": [[2], [1]]}, {"offset": 4})
        >>> a.compose(b).in_bases("lane")
        ((2,), (1,))
        """
        for name, size in self.out_dims:
            if outer.in_dim_size(name) < size:
                raise InputError(
                    "compose",
                    f"dim {name!r}",
                    f"outer layout covers {outer.in_dim_size(name)} values, need {size}",
                )
        bases = []
        for d, bs in self.bases:
            row = []
            for b in bs:
                img = outer.apply(**dict(zip(self.out_dim_names, b)))
                row.append(tuple(img[n] for n in outer.out_dim_names))
            bases.append((d, tuple(row)))
        return type(self)(tuple(bases), outer.out_dims)

    # ----- inversion ------------------------------------------------------------------------
    def invert(self) -> Self:
        """Inverse of an invertible layout: out dims become in dims and vice versa.

        Requires: ``self.is_invertible()`` (square and full rank).
        Postcondition: ``self.compose(result)`` is the identity on ``self``'s input dims, and
        ``result.compose(self)`` the identity on its output dims.

        >>> from bankproof.models.layout import LinearLayout
        >>> L = LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
        >>> L.invert().as_dict()
        {'dim0': [[2]], 'dim1': [[1]]}
        """
        if not self.is_invertible():
            raise InputError(
                "invert",
                "layout",
                f"is not invertible (rank {self.rank}, {self.in_bits} in bits, {self.out_bits} out bits)",
            )
        cols = self.columns
        in_sizes = [(d, 1 << len(bs)) for d, bs in self.bases]
        tmpl = type(self)((), tuple(in_sizes))
        bases = []
        for name, size in self.out_dims:
            row = []
            for i in range(log2(size)):
                coords = [0] * len(self.out_dims)
                coords[self.out_dim_names.index(name)] = 1 << i
                x = f2.solve(cols, self.pack_dim0_lowest(coords))
                row.append(tmpl.unpack_dim0_lowest(x))
            bases.append((name, tuple(row)))
        return type(self)(tuple(bases), tuple(in_sizes))

    def invert_and_compose(self, outer: Self) -> Self:
        """``outer⁻¹ ∘ self`` for a surjective ``outer`` with the same output space (§5.4):
        for each input bit of ``self``, the preimage under ``outer`` is the same-named bit when
        ``outer`` maps it to the same place (identity where they agree), otherwise the smallest
        preimage (which sends broadcast data to the lowest input).

        Requires: ``self`` and ``outer`` have the same output dims and sizes; ``outer`` is surjective.
        Postcondition: ``result.compose(outer) == self`` up to the order of output dims (every
        element ``self`` reaches, ``outer`` reaches from ``result``'s image).

        >>> from bankproof.models.layout import LinearLayout
        >>> A = LinearLayout.from_bases({"lane": [[1], [2]]}, {"dim0": 4})
        >>> B = LinearLayout.from_bases({"lane": [[2], [1]]}, {"dim0": 4})
        >>> A.invert_and_compose(B).as_dict()
        {'lane': [[2], [1]]}
        """
        if sorted(self.out_dims) != sorted(outer.out_dims):
            raise InputError(
                "invert_and_compose",
                "out dims",
                "must match",
                f"{list(self.out_dims)} vs {list(outer.out_dims)}",
            )
        if not outer.is_surjective():
            raise InputError("invert_and_compose", "outer layout", "must be surjective")
        me = self.transpose_outs(outer.out_dim_names)
        cols = outer.columns
        tmpl = type(self)((), tuple((d, 1 << len(bs)) for d, bs in outer.bases))
        bases = []
        for d, bs in me.bases:
            row = []
            for i, b in enumerate(bs):
                ob = outer.in_bases(d)
                same = i < len(ob) and ob[i] == b
                x = 1 << (outer.in_offset(d) + i) if same else f2.solve(cols, outer.pack_dim0_lowest(b))
                row.append(tmpl.unpack_dim0_lowest(x))
            bases.append((d, tuple(row)))
        return type(self)(tuple(bases), tmpl.out_dims)

    def divide_left(self, inner: Self) -> Self | None:
        """The C with ``self == inner * C`` (Def 4.4, label-wise), or None when ``inner`` does
        not divide ``self``.

        Requires: nothing (a layout ``inner`` does not divide gives ``None``).
        Postcondition: when not ``None``, ``inner * result == self``.

        >>> from bankproof.models.layout import LinearLayout
        >>> L = LinearLayout.identity1d(8, "register", "dim0")
        >>> L.divide_left(LinearLayout.identity1d(2, "register", "dim0")).in_bases("register")
        ((1,), (2,))
        """
        sizes = dict(inner.out_dims)
        for name in inner.out_dim_names:
            if name not in self.out_dim_names or self.out_dim_size(name) % sizes[name]:
                return None
        for d in inner.in_dim_names:
            if len(self.in_bases(d)) < len(inner.in_bases(d)):
                return None
        bases = []
        for d, bs in self.bases:
            k = len(inner.in_bases(d))
            head = [dict(zip(self.out_dim_names, b)) for b in bs[:k]]
            for hb, ib in zip(head, inner.in_bases(d)):
                want = dict(zip(inner.out_dim_names, ib))
                if any(hb.get(n, 0) != want.get(n, 0) for n in self.out_dim_names):
                    return None
            row = []
            for b in bs[k:]:
                nb = []
                for n, c in zip(self.out_dim_names, b):
                    s = sizes.get(n, 1)
                    if c % s:
                        return None
                    nb.append(c // s)
                row.append(tuple(nb))
            bases.append((d, tuple(row)))
        out = tuple((n, s // sizes.get(n, 1)) for n, s in self.out_dims)
        return type(self)(tuple(bases), out)

    # ----- validity (the layout's own invariants; Defs 4.10, 4.14) ---------------------------
    def check(self) -> list[InputError]:
        """Every invariant the layout breaks, in order (empty: none), as the error each door
        reports (the API raises it, the CLI exits 2, the workbench answers 400): output sizes are
        powers of two, every basis has one coordinate per output dim, each inside its dim.
        Triton's ``checkInvariants``: :meth:`~bankproof.models.layout.LinearLayout.from_bases`,
        the constructor every notation's reader goes through, raises the first.

        >>> from bankproof.models.layout import LinearLayout
        >>> LinearLayout((("lane", ((3,),)),), (("dim0", 2),)).check()[0].problem
        'coordinate for dim0 must be in [0, 2)'
        """
        out = []
        for name, size in self.out_dims:
            if not is_pow2(size):
                out.append(InputError("layout", f"out dim {name!r}", "size must be a power of two", size))
        rank = len(self.out_dims)
        for in_dim, bs in self.bases:
            for b in bs:
                where = f"{in_dim} basis {list(b)}"
                if len(b) != rank:
                    out.append(InputError("layout", where, f"must have {rank} coordinates"))
                    continue
                for c, (name, size) in zip(b, self.out_dims):
                    if not 0 <= c < size:
                        out.append(
                            InputError("layout", where, f"coordinate for {name} must be in [0, {size})", c)
                        )
        return out

    def distributed_violations(self) -> list[str]:
        """Why this is not a distributed layout in the sense of Def 4.10 (empty when it is):
        surjective; each basis has at most one nonzero bit; no nonzero basis repeated."""
        out = []
        if not self.is_surjective():
            out.append(f"not surjective (rank {self.rank} < {self.out_bits} output bits)")
        seen: dict[int, str] = {}
        for d, bs in self.bases:
            for i, b in enumerate(bs):
                v = self.pack_dim0_lowest(b)
                if v & (v - 1):
                    out.append(f"{d}[{i}] = {list(b)} has more than one nonzero bit")
                elif v:
                    if v in seen:
                        out.append(f"{d}[{i}] = {list(b)} repeats {seen[v]}")
                    seen[v] = f"{d}[{i}]"
        return out

    def memory_violations(self) -> list[str]:
        """Why this is not a memory layout in the sense of Def 4.14 (empty when it is):
        invertible; each basis has one or two nonzero bits."""
        out = []
        if not self.is_invertible():
            out.append(f"not invertible (rank {self.rank}, {self.in_bits} in bits, {self.out_bits} out bits)")
        for d, bs in self.bases:
            for i, b in enumerate(bs):
                n = bin(self.pack_dim0_lowest(b)).count("1")
                if n not in (1, 2):
                    out.append(f"{d}[{i}] = {list(b)} has {n} nonzero bits (Def 4.14 allows 1 or 2)")
        return out


def _supremum(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """Merge two name lists keeping both relative orders, ``a``'s own names first at each step
    (Triton's ``supremum``): ``[a, b] ⊔ [b, c] = [a, b, c]``."""
    out: list[str] = []
    i = j = 0
    while True:
        while i < len(a) and a[i] in out:
            i += 1
        while j < len(b) and b[j] in out:
            j += 1
        if i >= len(a) and j >= len(b):
            return out
        if i < len(a) and j < len(b) and a[i] == b[j] or i < len(a) and a[i] not in b:
            out.append(a[i])
        elif j < len(b) and b[j] not in a:
            out.append(b[j])
        else:
            raise InputError(
                "product",
                "dims",
                "common dims must appear in the same relative order",
                f"{list(a)} vs {list(b)}",
            )
