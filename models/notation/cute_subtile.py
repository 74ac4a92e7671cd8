"""An epilogue subtile: CUTLASS's epilogues copy the accumulator to shared memory one subtile at a
time (``make_tiled_copy_S(Copy_Atom<...>, make_tiled_copy_C_atom(...))`` partitioning an
``EpilogueTile`` of, say, 64x32 out of a 64x128 MMA tile), reusing one subtile-sized buffer. Each
thread writes the values of its fragment that fall in the subtile; the copy atom's values are the
first of the fragment (CuTe truncates the C TV layout to the atom's values and keeps their order).

Over F2 that is the subspace of the fragment inside the subtile: register bases outside it are
combined away (in order, so the atom's leading registers stay first), and a lane or warp that would
write outside the subtile is refused (the subtile would split one copy's lanes).

>>> lay = LinearLayout.from_bases({"register": [[0, 1], [0, 8], [0, 16]], "lane": [[1, 0]]}, ["dim0", "dim1"])
>>> subtile(lay, [2, 16]).in_bases("register")
((0, 1), (0, 8))
"""

from __future__ import annotations

from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout


def subtile(layout: LinearLayout, shape: list[int]) -> LinearLayout:
    """``layout`` (onto a tile) restricted to the subtile ``[0, shape)`` at its origin."""
    sizes = [layout.out_dim_size(n) for n in layout.out_dim_names]
    offsets, acc = [], 0
    for full, sub in zip(sizes, shape):
        offsets.append(acc)
        acc += (full // sub).bit_length() - 1

    def high(v: tuple[int, ...]) -> int:
        """The bits of ``v`` beyond the subtile, packed (dim 0's lowest)."""
        return sum((x // s) << o for x, s, o in zip(v, shape, offsets))

    pivots: dict[int, tuple[int, ...]] = {}  # leading high bit -> a basis with that high bit

    def reduce(v: tuple[int, ...]) -> tuple[int, ...]:
        h = high(v)
        while h:
            top = h.bit_length() - 1
            if top not in pivots:
                return v
            v = tuple(x ^ y for x, y in zip(v, pivots[top]))
            h = high(v)
        return v

    kept: list[tuple[int, ...]] = []
    for b in layout.in_bases("register"):
        v = reduce(tuple(b))
        if high(v):
            pivots[high(v).bit_length() - 1] = v
        else:
            kept.append(v)
    bases = {"register": kept}
    for dim in layout.in_dim_names:
        if dim == "register":
            continue
        out = []
        for k, b in enumerate(layout.in_bases(dim)):
            v = reduce(tuple(b))
            if high(v):
                raise InputError(
                    "cute", "shape",
                    f"is an epilogue subtile {'x'.join(map(str, shape))} that splits one copy's threads: "
                    f"{dim} {k} writes at {tuple(b)}, outside it (take a subtile each thread's values cover)",
                )  # fmt: skip
            out.append(v)
        bases[dim] = out
    return LinearLayout.from_bases(bases, {n: s for n, s in zip(layout.out_dim_names, shape)})
