"""An access through a view of the shared tile: CuTe's ``composition(SmemLayout, view)``, the same
bytes addressed with other coordinates (FlashAttention-2's ``sVt``: ``make_tensor(sV.data(),
composition(SmemLayoutKV{}, make_layout(Shape<kHeadDim, kBlockN>{}, GenRowMajor{})))``).

A view coordinate ``c`` is the tile's 1-D index ``view(c)``, read back as the tile's coordinate
(first mode fastest, as CuTe does). For power-of-two sizes and strides that is a permutation of
coordinate bits, so an access layout over the view's coordinates becomes one over the tile's.

>>> v = read_view("make_layout(make_shape(_4{}, _2{}), LayoutRight{})", [2, 4])
>>> v.shape, v.tile_coord((1, 0)), v.tile_coord((0, 1))
([4, 2], (0, 1), (1, 0))
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_shapes import evaluate, leaves, size
from bankproof.models.notation.cute_values import Layout


@dataclass(frozen=True)
class View:
    """``view``: the layout composed with the tile's; ``tile_shape``: the tile's dims."""

    layout: Layout
    tile_shape: tuple[int, ...]

    @property
    def shape(self) -> list[int]:
        modes = self.layout.shape if isinstance(self.layout.shape, tuple) else (self.layout.shape,)
        return [size(m) for m in modes]

    def tile_coord(self, coord: tuple[int, ...]) -> tuple[int, ...]:
        """The tile coordinate a view coordinate addresses."""
        shape = self.layout.shape if isinstance(self.layout.shape, tuple) else (self.layout.shape,)
        stride = self.layout.stride if isinstance(self.layout.stride, tuple) else (self.layout.stride,)
        index = sum(evaluate(s, d, c) for s, d, c in zip(shape, stride, coord))
        out = []
        for n in self.tile_shape:
            out.append(index % n)
            index //= n
        return tuple(out)

    def apply(self, layout: LinearLayout, names: list[str]) -> LinearLayout:
        """``layout`` (onto the view's coordinates) re-aimed at the tile's coordinates ``names``."""
        bases = {}
        for d in layout.in_dim_names:
            # read_view admits only bit permutations: a coordinate's index is the XOR of its bits' indices
            bases[d] = [list(self.tile_coord(tuple(b))) for b in layout.in_bases(d)]
        return LinearLayout.from_bases(bases, dict(zip(names, self.tile_shape)))


def read_view(text: object, tile_shape: list[int]) -> View:
    """A view layout (CuTe text) over a tile of ``tile_shape``; refused unless it is a bijection
    of power-of-two sizes and strides onto the tile's elements."""
    if not isinstance(text, str):
        raise InputError("cute", "view", "must be a CuTe layout string", text)
    value = read(text)
    if not isinstance(value, Layout):
        raise InputError(
            "cute", "view",
            "must be a plain layout (what composition(SmemLayout, view) composes with the tile's layout, "
            "e.g. make_layout(Shape<kHeadDim, kBlockN>{}, GenRowMajor{}))", text,
        )  # fmt: skip
    total = size(value.shape)
    if total != size(tuple(tile_shape)):
        want = size(tuple(tile_shape))
        raise InputError("cute", "view", f"has {total} elements; the tile has {want}", text)
    view = View(value, tuple(tile_shape))
    seen = 0
    for s, d in zip(leaves(value.shape), leaves(value.stride)):
        if s & (s - 1) or d <= 0 or d & (d - 1):
            raise InputError("cute", "view", "must have power-of-two sizes and strides (F2-linear)", text)
        for i in range(s.bit_length() - 1):
            bit = d << i
            if bit >= total or seen & bit:
                raise InputError("cute", "view", "must address every tile element exactly once", text)
            seen |= bit
    return view
