"""An access on a linear memory layout held as bases, not tables: the byte address of every
(register, lane, warp, block) is the XOR of its input bits' images, so an access of any size is a
handful of integers. Warp instruction ``i`` (register chunks fastest, then warps, then blocks, as
:func:`~bankproof.models.access.build_access` orders them) is instruction 0's lane addresses XOR a
constant whose bits below the vector are zero; :meth:`LinearAccess.rows` builds any run of them,
:meth:`LinearAccess.instruction` one of them in full (coordinates and elements), without tables.

>>> from bankproof.models.notation import parse_layout
>>> d = parse_layout('{"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}', [2, 32])
>>> m = parse_layout("32*m + n", [2, 32])
>>> a = linear_access(d.layout, m.layout, elem_bits=32, kind="load")
>>> a.instr.name, a.instructions, a.rows(1, 2)[0, :3].tolist()
('ld.shared.b32', 2, [128, 132, 136])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from bankproof.models import f2
from bankproof.models.access import WarpInstructions, vector_cap, vector_first
from bankproof.models.hardware import LANES, Instr, instruction
from bankproof.models.kept import kept
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout, inverse_columns

SPAN_ROWS = 1 << 12  # accesses with at most this many instructions build every constant at once
MAX_LINEAR_BITS = 40  # (register, lane, warp, block) input bits an access held as bases may have


def offset_of(inverse: tuple[int, ...], packed: int) -> int:
    """The element offset of a packed coordinate (:func:`inverse_columns` ``inverse``)."""
    return f2.apply(inverse, packed)


@dataclass(frozen=True)
class LinearAccess:
    """One access as bases: ``lanes``, ``chunks`` (register bits beyond the vector), ``warps``
    and ``blocks`` are the byte address of each input bit; ``layout`` is the access layout
    (registers reordered vector-first, as the access walks them); ``vector`` elements a lane."""

    kind: str
    instr: Instr
    vector: int
    lanes: tuple[int, ...]
    chunks: tuple[int, ...]
    warps: tuple[int, ...]
    blocks: tuple[int, ...]
    coords: tuple[tuple[int, ...], ...]  # packed coordinates of each register, lane, warp, block bit
    out_dims: tuple[tuple[str, int], ...]

    @property
    def in_bits(self) -> int:
        """The access's (register, lane, warp, block) input bits (registers that repeat data dropped)."""
        return sum(len(c) for c in self.coords)

    @property
    def instructions(self) -> int:
        return 1 << (len(self.chunks) + len(self.warps) + len(self.blocks))

    @property
    def columns(self) -> tuple[int, ...]:
        """Instruction index bit -> the constant it XORs in (chunks, then warps, then blocks)."""
        return self.chunks + self.warps + self.blocks

    def row(self) -> np.ndarray:
        """Instruction 0's 32 lane byte addresses (ldmatrix/stmatrix: row addresses; lanes past
        the ``.xN`` matrices' rows give none, 0); read-only, built once."""
        return self._row

    @functools.cached_property
    def _row(self) -> np.ndarray:
        out = _span(self.lanes)
        out[self.instr.address_lanes :] = 0
        out.setflags(write=False)
        return out

    def constants(self, start: int, stop: int) -> np.ndarray:
        """Instruction ``start`` .. ``stop - 1``'s constants (what each XORs into :meth:`row`)."""
        if self.instructions <= SPAN_ROWS:
            return _span(self.columns)[start:stop]
        k = (stop - start).bit_length() - 1
        if stop - start == 1 << k and start % (1 << k) == 0:  # an aligned run: a span XOR one constant
            return _low_span(self.columns[:k]) ^ f2.apply(self.columns[k:], start >> k)
        idx = np.arange(start, stop, dtype=np.int64)
        out = np.zeros(len(idx), dtype=np.int64)
        for bit, c in enumerate(self.columns):
            out ^= ((idx >> bit) & 1) * c
        return out

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Instructions ``start`` .. ``stop - 1``'s lane byte addresses, shape ``(k, 32)``."""
        out = self.constants(start, stop)[:, None] ^ self.row()[None, :]
        out[:, self.instr.address_lanes :] = 0
        return out

    def position(self, i: int) -> tuple[int, int, int]:
        """Instruction ``i``'s (warp, first register, block)."""
        nc, nw = len(self.chunks), len(self.warps)
        return (i >> nc) & ((1 << nw) - 1), (i & ((1 << nc) - 1)) * self.vector, i >> (nc + nw)

    def addresses(self, i: int) -> np.ndarray:
        """Instruction ``i``'s 32 lane byte addresses (:meth:`rows` of one)."""
        out = self.row() ^ f2.apply(self.columns, i)
        out[self.instr.address_lanes :] = 0
        return out

    def _base(self, i: int) -> int:
        """The packed coordinate instruction ``i``'s register chunk, warp and block add."""
        warp, reg, block = self.position(i)
        regs, _, warps, blocks = self.coords
        v_bits = self.vector.bit_length() - 1
        return f2.apply(regs[v_bits:], reg >> v_bits) ^ f2.apply(warps, warp) ^ f2.apply(blocks, block)

    def lane_coords(self, i: int, lane: int) -> tuple[int, ...]:
        """The coordinates of the first element ``lane`` moves in instruction ``i``."""
        packed = self._base(i) ^ f2.apply(self.coords[1], lane)
        out, shift = [], 0
        for _, size in self.out_dims:
            out.append((packed >> shift) & (size - 1))
            shift += size.bit_length() - 1
        return tuple(out)

    def instruction(self, i: int) -> WarpInstructions:
        """Instruction ``i`` alone, in full: its addresses, warp, first register, block, the
        coordinates of every lane and the elements each moves (a one-row
        :class:`~bankproof.models.access.WarpInstructions`)."""
        warp, reg, block = self.position(i)
        v_bits = self.vector.bit_length() - 1
        # (32, vector) packed coordinates of every element each lane moves; the first is the lane's own
        elems = (_span(self.coords[1]) ^ self._base(i))[:, None] ^ _span(self.coords[0][:v_bits])[None, :]
        coords = _unpack(self.out_dims, elems)[None]
        ins, first = self.instr, coords[:, :, 0]
        where = (np.array([warp]), np.array([reg]), first, np.array([block]))
        return WarpInstructions(self.kind, ins, self.vector, self.addresses(i)[None], *where, coords)


def _span(cols) -> np.ndarray:
    """Every XOR combination of ``cols``, index bit ``k`` taking ``cols[k]``."""
    if len(cols) <= 6:  # a few dozen entries: Python lists beat numpy's per-call cost
        small = [0]
        for c in cols:
            small += [x ^ c for x in small]
        return np.array(small, dtype=np.int64)
    out = np.zeros(1 << len(cols), dtype=np.int64)
    for k, c in enumerate(cols):
        np.bitwise_xor(out[: 1 << k], c, out=out[1 << k : 2 << k])
    return out


@functools.lru_cache(maxsize=8)
def _low_span(cols: tuple[int, ...]) -> np.ndarray:
    out = _span(cols)
    out.setflags(write=False)
    return out


def _unpack(out_dims: tuple[tuple[str, int], ...], packed: np.ndarray) -> np.ndarray:
    """Packed coordinates (first out dim lowest) -> ``(..., rank)`` coordinates."""
    out = np.empty(packed.shape + (len(out_dims),), dtype=np.int64)
    shift = 0
    for d, (_, size) in enumerate(out_dims):
        np.bitwise_and(packed >> shift, size - 1, out=out[..., d])
        shift += size.bit_length() - 1
    return out


def linear_access(
    dist: LinearLayout, memory: LinearLayout | PaddedLayout, elem_bits: int, kind: str, instr: str = "auto"
) -> LinearAccess | None:
    """The access as bases, or None where :func:`~bankproof.models.access.build_access` must
    enumerate it (padded memory, ldmatrix/stmatrix, a non-invertible layout, anything it would
    refuse: it then says why). ``auto``/``vector[N]`` pick the widest legal vector as it does."""
    if isinstance(memory, PaddedLayout) or kind not in ("load", "store") or elem_bits % 8 or elem_bits > 64:
        return None
    if sorted(dist.out_dims) != sorted(memory.out_dims) or "offset" not in memory.in_dim_names:
        return None
    if dist.in_bits > MAX_LINEAR_BITS or len(dist.in_bases("lane")) != LANES.bit_length() - 1:
        return None
    inv = inverse_columns(memory)
    if inv is None:
        return None
    eb = elem_bits // 8
    packed = _packed(dist, tuple(memory.out_dim_names))
    offs = [[f2.apply(inv, p) for p in ps] for ps in packed]
    order = vector_first(list(range(len(packed[0]))), offs[0])
    regs = [packed[0][k] for k in order]
    reg_b = [offs[0][k] * eb for k in order]
    lanes, warps, blocks = ([o * eb for o in os] for os in offs[1:])
    if instr == "auto" or instr.startswith("vector"):
        cap = vector_cap(instr)
        v_bits = 0
        while (
            v_bits < len(reg_b)
            and (2 << v_bits) * eb <= min(16, cap)
            and reg_b[v_bits] == eb << v_bits
            and _aligned(reg_b[v_bits + 1 :] + lanes + warps + blocks, (2 << v_bits) * eb)
        ):
            v_bits += 1
        ins = instruction(f"{'ld' if kind == 'load' else 'st'}{(eb << v_bits) * 8}")
    else:
        try:
            ins = instruction(instr)
        except Exception:  # noqa: BLE001 - build_access names the field
            return None
        if ins.is_load != (kind == "load"):
            return None
        if ins.is_matrix:
            got = _matrix_rows(ins, eb, reg_b, lanes, warps + blocks)
            if got is None:
                return None
            lanes, v_bits = got
        elif ins.width % eb:
            return None
        else:
            v_bits = (ins.width // eb).bit_length() - 1
            if v_bits > len(reg_b) or any(reg_b[k] != eb << k for k in range(v_bits)):
                return None
            if not _aligned(reg_b[v_bits:] + lanes + warps + blocks, ins.width):
                return None
    coords = (tuple(regs), *packed[1:])
    dims = tuple((d, memory.out_dim_size(d)) for d in memory.out_dim_names)
    chunks = tuple(reg_b[v_bits:])
    return LinearAccess(
        kind, ins, 1 << v_bits, tuple(lanes), chunks, tuple(warps), tuple(blocks), coords, dims
    )


@kept(64)
def _packed(dist: LinearLayout, names: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """Packed coordinates (``names``' order, first lowest) of the distributed layout's register
    (repeats of data dropped), lane, warp and block bits; kept for the last few layouts."""
    t = dist.transpose_outs(names)
    regs = tuple(c for c in t.packed("register") if c)
    return (regs, *(tuple(t.packed(d)) for d in ("lane", "warp", "block")))


def _matrix_rows(ins: Instr, eb: int, regs: list[int], lanes: list[int], others: list[int]):
    """(row-address byte images of the 5 lane bits, log2 registers an instruction takes) of an
    ldmatrix/stmatrix ``.xN`` over linear memory, or None where it cannot deliver the registers
    (``build_access`` says why). Lane ``8j + r`` addresses row r of matrix j: without ``.trans``
    the row lane ``4r``'s register ``k*j`` starts (``k = 4 / element bytes``), so lane bits 0-1 must
    be bytes 4 and 8 of the row and a lane's ``k`` registers its bytes; with ``.trans`` (16-bit) the
    row lane ``r // 2``'s register ``2j + r % 2`` starts, lane bits 2-4 bytes 2, 4 and 8 of it.
    Every row address is 16-byte aligned."""
    if eb not in (1, 2, 4) or (ins.trans and eb != 2):
        return None
    k_bits, m_bits = (4 // eb).bit_length() - 1, ins.matrices.bit_length() - 1
    per_bits = k_bits + m_bits
    if per_bits > len(regs):
        return None
    if ins.trans:
        in_row, rows = [(lanes[2], 2), (lanes[3], 4), (lanes[4], 8)], [regs[0], lanes[0], lanes[1]]
    else:
        in_row = [(regs[b], eb << b) for b in range(k_bits)] + [(lanes[0], 4), (lanes[1], 8)]
        rows = lanes[2:5]
    rows = rows + regs[k_bits : k_bits + m_bits] if not ins.trans else rows + regs[1 : 1 + m_bits]
    if any(col != want for col, want in in_row) or not _aligned(rows + regs[per_bits:] + others, 16):
        return None
    return rows + [0] * (5 - len(rows)), per_bits


def _aligned(cols: list[int], align: int) -> bool:
    return all(c % align == 0 for c in cols)
