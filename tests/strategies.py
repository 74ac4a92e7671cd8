"""Hypothesis strategies: random distributed layouts (Def 4.10) and memory layouts."""

from __future__ import annotations

from bankproof.models.layout import LinearLayout
from hypothesis import strategies as st


@st.composite
def shapes(draw, min_bits: int = 5, max_bits: int = 12):
    total = draw(st.integers(min_bits, max_bits))
    rows = draw(st.integers(0, total))
    return [1 << rows, 1 << (total - rows)]


@st.composite
def distributed(draw, shape: list[int], max_warp_bits: int = 3):
    """Every tensor bit is one register, lane or warp basis; 5 lane bases (zeros broadcast when
    the tensor is small or by chance), 0-3 warp bases, maybe a zero register basis."""
    units = [[1 << i, 0] for i in range(shape[0].bit_length() - 1)]
    units += [[0, 1 << i] for i in range(shape[1].bit_length() - 1)]
    units = draw(st.permutations(units))
    units = list(units)
    lane = []
    for _ in range(5):
        if units and draw(st.integers(0, 9)) != 0:
            lane.append(units.pop(0))
        else:
            lane.append([0, 0])
    warp = []
    for _ in range(draw(st.integers(0, max_warp_bits))):
        if units and draw(st.integers(0, 5)) != 0:
            warp.append(units.pop(0))
        else:
            warp.append([0, 0])
    reg = list(units)
    if reg and draw(st.integers(0, 7)) == 0:
        reg.insert(draw(st.integers(0, len(reg))), [0, 0])
    return LinearLayout.from_bases(
        {"register": reg, "lane": lane, "warp": warp, "block": []}, {"dim0": shape[0], "dim1": shape[1]}
    )


@st.composite
def memory(draw, shape: list[int]):
    """Random invertible memory layouts: permuted unit vectors with random XOR mixing."""
    units = [[1 << i, 0] for i in range(shape[0].bit_length() - 1)]
    units += [[0, 1 << i] for i in range(shape[1].bit_length() - 1)]
    order = draw(st.permutations(range(len(units))))
    bases = [units[i][:] for i in order]
    for i in range(len(bases)):
        for j in range(len(bases)):
            if i != j and draw(st.integers(0, 5)) == 0:
                bases[i] = [a ^ b for a, b in zip(bases[i], bases[j])]
    lay = LinearLayout.from_bases({"offset": bases}, {"dim0": shape[0], "dim1": shape[1]})
    return (
        lay
        if lay.is_invertible()
        else LinearLayout.from_bases({"offset": [units[i] for i in order]}, dict(lay.out_dims))
    )
