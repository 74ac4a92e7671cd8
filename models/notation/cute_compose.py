"""CuTe's ``composition(A, B)`` of two layouts, ``c -> A(B(c))`` with B's shape: how a kernel takes a
view of a shared tile, such as FlashAttention-2's transposed V
(``composition(SmemLayoutKV{}, make_layout(Shape<kHeadDim, kBlockN>{}, GenRowMajor{}))``).

Read for power-of-two sizes and strides (the layouts bankproof reads are F2-linear): B's index bits
pick A's index bits one by one, and each A index bit adds a fixed offset, so the composite is a
layout with one leaf per run of bits, grouped under B's modes as CuTe groups them. A swizzled A
keeps its swizzle (CuTe: ``composition(Sw o L, B) = Sw o composition(L, B)``).

>>> composition(Layout((64, 128), (128, 1)), Layout((128, 64), (64, 1)), None)
Layout(shape=(128, 64), stride=(1, 128))
"""

from __future__ import annotations

from bankproof.models.errors import InputError
from bankproof.models.notation.cute_shapes import Nested, leaves, size
from bankproof.models.notation.cute_values import Composed, Layout


def _log2(v: int) -> int | None:
    return v.bit_length() - 1 if v > 0 and not v & (v - 1) else None


def _bit_offsets(a: Layout, error) -> list[int]:
    """What each bit of A's 1-D index adds to the offset (A's leaves colexicographic)."""
    out: list[int] = []
    for s, d in zip(leaves(a.shape), leaves(a.stride)):
        n = _log2(s)
        if n is None:
            raise error(f"composition is read for power-of-two sizes; the outer layout has a mode of {s}")
        out += [d << i for i in range(n)]
    return out


def _mode(shape: Nested, stride: Nested, bits: list[int], error) -> tuple[Nested, Nested]:
    """B's mode ``shape:stride`` carried through A: each leaf becomes its runs of A's bit offsets."""
    if isinstance(shape, tuple):
        parts = [_mode(s, d, bits, error) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    n = _log2(shape)
    if n is None:
        raise error(f"composition is read for power-of-two sizes; the inner layout has a mode of {shape}")
    if stride == 0 or n == 0:
        return shape, 0 if stride == 0 else stride
    k = _log2(stride)
    if k is None:
        raise error(f"composition is read for power-of-two strides; the inner layout has a stride {stride}")
    if k + n > len(bits):
        raise error(
            f"composition: the inner layout reaches index {stride * (shape - 1)}, beyond the outer "
            f"layout's size {1 << len(bits)}"
        )
    runs: list[list[int]] = []  # [size, stride] runs where each next bit doubles the offset
    for off in bits[k : k + n]:
        if runs and off and runs[-1][1] * runs[-1][0] == off:
            runs[-1][0] *= 2
        else:
            runs.append([2, off])
    if len(runs) == 1:
        return runs[0][0], runs[0][1]
    return tuple(r[0] for r in runs), tuple(r[1] for r in runs)


def composition(outer, inner, error) -> Layout | Composed:
    """``composition(A, B)`` for a layout or swizzled layout A and a layout B (see the module).

    >>> composition(Layout((8, 8), (8, 1)), Layout((8, 8), (8, 1)), None).stride
    (1, 8)
    """
    if error is None:

        def error(problem: str) -> InputError:
            return InputError("cute", "composition", problem)

    if not isinstance(inner, Layout):
        raise error("composition(A, B) takes a layout as B (a shape with a stride or LayoutRight{})")
    base = outer.layout if isinstance(outer, Composed) else outer
    if not isinstance(base, Layout):
        raise error(
            "composition(A, B) needs A written out as a layout or swizzled layout (a type name such as "
            "SmemLayoutKV{} stands for a definition bankproof cannot see: write its definition)"
        )
    bits = _bit_offsets(base, error)
    if size(inner.shape) > 1 << len(bits):
        raise error(f"composition: the inner layout has {size(inner.shape)} elements, more than the outer's")
    shape, stride = _mode(inner.shape, inner.stride, bits, error)
    out = Layout(shape, stride)
    if isinstance(outer, Composed):
        return Composed(outer.swizzle, outer.offset, outer.ptr_bits, out)
    return out
