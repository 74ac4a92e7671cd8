"""Triton's MFMA and WMMA layout attributes (``#ttg.amd_mfma``, ``#ttg.amd_wmma`` and their ``dot_op``
operands), built exactly as Triton 3.9.0's ``to_linear_layout`` builds them (the agreement test
compares random attributes with Triton itself). Warps of MFMA layouts have 64 lanes, of WMMA 32.

>>> a = parse_triton("#ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], instrShape = [16, 16, 16], "
...                  "isTransposed = false}>")
>>> a.to_layout([16, 16]).as_dict()["lane"]
[[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import triton_ll as tl
from bankproof.models.notation.triton import SwizzledShared, parse_triton, register  # noqa: F401 - doctest
from bankproof.models.notation.triton_fields import (
    Fields,
    TritonLayout,
    bases_tuple,
    cga_layout,
    cga_text,
    check_shape,
    fmt_value,
)

MFMA_LANES = 64
WMMA_LANES = 32
MFMA_SHAPES = ((32, 32), (16, 16), (64, 4), (4, 64))
WMMA_K = {1: (16,), 2: (16, 32), 3: (32, 64, 128)}  # the instruction shapes Triton 3.9.0 accepts


def _id(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    """Triton's ``identity1D``; a size below 2 adds nothing (Triton builds an empty layout)."""
    return LinearLayout.identity1d(max(size, 1), in_dim, out_dim)


@dataclass(frozen=True)
class AmdMfma(TritonLayout):
    """``#ttg.amd_mfma``: the result layout of MFMA instructions (CDNA: gfx908 to gfx950)."""

    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    transposed: bool
    tiles_per_warp: tuple[int, ...]
    element_bits: int
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "amd_mfma"
    lanes = MFMA_LANES

    @staticmethod
    def parse(f: Fields) -> AmdMfma:
        version = f.int("version")
        if not 1 <= version <= 4:
            raise InputError(f.kind, "version", "must be 1 to 4 (gfx908, gfx90a, gfx942, gfx950)", version)
        wpc = f.ints("warpsPerCTA", pow2=True)
        rank = len(wpc)
        if rank not in (2, 3):
            raise InputError(f.kind, "warpsPerCTA", "must have 2 or 3 entries", fmt_value(wpc))
        instr = f.ints("instrShape", pow2=True)
        if len(instr) not in (2, 3) or tuple(instr[:2]) not in MFMA_SHAPES:
            what = "must be [M, N, K] with M x N one of 32x32, 16x16, 64x4, 4x64"
            raise InputError(f.kind, "instrShape", what, fmt_value(instr))
        transposed = f.bool("isTransposed", False)
        if tuple(instr[:2]) == (64, 4) and not transposed:
            raise InputError(
                f.kind, "isTransposed", "must be true for a 64x4 instruction (Triton asserts it)"
            )
        tiles = f.ints("tilesPerWarp", [1] * rank, pow2=True, rank=rank)
        bits = f.int("elementBitWidth", 32)
        if bits not in (32, 64):
            raise InputError(f.kind, "elementBitWidth", "must be 32 or 64", bits)
        cga = bases_tuple(cga_layout(f, rank))
        return AmdMfma(version, tuple(wpc), tuple(instr), transposed, tuple(tiles), bits, cga)

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        tiles = (
            f", tilesPerWarp = {fmt_value(self.tiles_per_warp)}"
            if any(t != 1 for t in self.tiles_per_warp)
            else ""
        )
        bits = f", elementBitWidth = {self.element_bits}" if self.element_bits != 32 else ""
        return (
            f"#ttg.amd_mfma<{{version = {self.version}, warpsPerCTA = {fmt_value(self.warps_per_cta)}, "
            f"instrShape = {fmt_value(self.instr_shape)}, "
            f"isTransposed = {fmt_value(self.transposed)}{tiles}{bits}"
            f"{cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        """Lanes along N then M (or M then N when transposed), ``height`` registers per lane
        (4; 1 for 64-bit results), tiles of the instruction, then N-contiguous repeats:
        tilesPerWarp N, warps N, the rest of N, tilesPerWarp M, warps M."""
        check_shape(self.kind, shape, self.rank)
        rank = self.rank
        names = tl.dims(rank)
        m_i, n_i = rank - 2, rank - 1
        dim_m, dim_n = names[m_i], names[n_i]
        m, n = self.instr_shape[0], self.instr_shape[1]
        height = 1 if self.element_bits == 64 else 4
        tiles = m * n // (MFMA_LANES * height)
        if not self.transposed:
            tile = _id(height, "register", dim_m) * (
                _id(n, "lane", dim_n) * _id(MFMA_LANES // n, "lane", dim_m)
            )
            tile = tile * _id(tiles, "register", dim_m)
        else:
            tile = _id(height, "register", dim_n) * (
                _id(m, "lane", dim_m) * _id(MFMA_LANES // m, "lane", dim_n)
            )
            tile = tile * _id(tiles, "register", dim_n)
        tile = tile.transpose_outs([dim_n, dim_m])
        tpw, wpc = self.tiles_per_warp, self.warps_per_cta
        tile = tile * _id(tpw[n_i], "register", dim_n) * _id(wpc[n_i], "warp", dim_n)
        tile = tile * _id(shape[n_i] // (n * wpc[n_i] * tpw[n_i]), "register", dim_n)
        tile = tile * _id(tpw[m_i], "register", dim_m) * _id(wpc[m_i], "warp", dim_m)
        if rank == 3:
            tile = (
                tile * _id(1, "register", names[0]) * _id(1, "lane", names[0]) * _id(wpc[0], "warp", names[0])
            )
        return tl.combine_cta_cga(tile, self.cga(), shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """An MFMA operand: ``kWidth`` registers along K, the non-K instruction size in lanes,
        the rest of the 64 lanes along K; K repeated to the shape (16 times more for the 64x64
        operand of a 4x64/64x4 instruction), then tilesPerWarp along non-K; every warp of the
        parent (the K ones are cut by the shape)."""
        rank = self.rank
        names = tl.dims(rank)
        order = tl.order_for_dot_operand(op_idx, rank, True)
        dim_k, dim_nonk = names[order[0]], names[order[1]]
        k_i = rank - 1 if op_idx == 0 else rank - 2
        nonk_i = rank - 2 if op_idx == 0 else rank - 1
        m, n = self.instr_shape[0], self.instr_shape[1]
        nonk = m if op_idx == 0 else n
        tile = _id(k_width, "register", dim_k) * (
            _id(nonk, "lane", dim_nonk) * _id(MFMA_LANES // nonk, "lane", dim_k)
        )
        k_tile = MFMA_LANES // nonk * k_width
        if ((m, n) == (64, 4) and op_idx == 0) or ((m, n) == (4, 64) and op_idx == 1):
            tile = tile * _id(16, "register", dim_k)
            k_tile *= 16
        if shape[k_i] > k_tile:
            tile = tile * _id(shape[k_i] // k_tile, "register", dim_k)
        tile = tile * _id(self.tiles_per_warp[nonk_i], "register", dim_nonk)
        tile = tile.transpose_outs([dim_k, dim_nonk])
        if rank == 3:
            tile = tile * _id(1, "register", names[order[2]]) * _id(1, "lane", names[order[2]])
        warps = tl.identity_standard_nd("warp", self.warps_per_cta, tl.matrix_order(rank, True))
        return tl.combine_cta_cga(tile * warps.transpose_outs(tile.out_dim_names), self.cga(), shape)


def _tiles(bases: Sequence[Sequence[int]], rank: int) -> dict[str, int]:
    """Out-dim extents, in tiles, that a tile grid's bases span (each dim: twice its largest)."""
    names = tl.dims(rank)
    return {names[d]: max([2 * b[d] for b in bases if b[d]] or [1]) for d in range(rank)}


@dataclass(frozen=True)
class AmdWmma(TritonLayout):
    """``#ttg.amd_wmma``: the result layout of WMMA instructions (RDNA3, RDNA4, gfx1250), 32-lane
    warps; ``ctaLayout`` places instruction tiles on registers and warps (bases in tiles)."""

    version: int
    transposed: bool
    register: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]
    instr_shape: tuple[int, ...]
    rank_: int
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "amd_wmma"
    lanes = WMMA_LANES

    @staticmethod
    def parse(f: Fields) -> AmdWmma:
        version = f.int("version")
        if not 1 <= version <= 3:
            raise InputError(f.kind, "version", "must be 1 to 3 (RDNA3, RDNA4, gfx1250)", version)
        transposed = f.bool("isTranspose", False)
        cta = f.get("ctaLayout", {})
        if not isinstance(cta, dict) or set(cta) - {"register", "warp"}:
            raise InputError(f.kind, "ctaLayout", "must be {register = [...], warp = [...]}", fmt_value(cta))
        sub = Fields(f.kind, cta, ["register", "warp"])
        rank = f.int("rank", 2)  # Triton 3.9.0: 2 unless the attribute says otherwise
        reg = sub.bases("register", [])
        warp = sub.bases("warp", [])
        cga = f.bases("CGALayout", [])
        for name, bases in (("ctaLayout.register", reg), ("ctaLayout.warp", warp), ("CGALayout", cga)):
            if any(len(b) != rank for b in bases):
                raise InputError(f.kind, name, f"bases must have {rank} coordinates", fmt_value(bases))
        if rank not in (2, 3):
            raise InputError(f.kind, "rank", "must be 2 or 3", rank)
        instr = f.ints("instrShape", [16, 16, 16], pow2=True)
        if len(instr) != 3 or instr[:2] != [16, 16] or instr[2] not in WMMA_K[version]:
            ks = " or ".join(map(str, WMMA_K[version]))
            raise InputError(f.kind, "instrShape", f"must be [16, 16, K] with K {ks} for version {version}",
                             fmt_value(instr))  # fmt: skip
        grid = LinearLayout.from_bases({"register": reg, "warp": warp}, _tiles(reg + warp, rank))
        if not grid.is_surjective():
            raise InputError(
                f.kind, "ctaLayout", "must reach every tile it spans (Triton requires it)", fmt_value(cta)
            )
        reg, warp, cga = bases_tuple(reg), bases_tuple(warp), bases_tuple(cga)
        return AmdWmma(version, transposed, reg, warp, tuple(instr), rank, cga)

    @property
    def rank(self) -> int:
        return self.rank_

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        parts = [f"register = {fmt_value(self.register)}"] if self.register else []
        parts.append(f"warp = {fmt_value(self.warp)}")
        rank = f", rank = {self.rank_}" if self.rank_ != 2 else ""
        return (
            f"#ttg.amd_wmma<{{version = {self.version}, isTranspose = {fmt_value(self.transposed)}, "
            f"ctaLayout = {{{', '.join(parts)}}}, instrShape = {fmt_value(self.instr_shape)}{rank}"
            f"{cga_text(self.cga_bases)}}}>"
        )

    def _grid(self, bases_reg, bases_warp) -> LinearLayout:
        rank = self.rank_
        return LinearLayout.from_bases(
            {"register": bases_reg, "warp": bases_warp}, _tiles(list(bases_reg) + list(bases_warp), rank)
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The 16x16 instruction tile (version 1: 8 registers every other row of M, lanes along N
        then the row parity; 2 and 3: 8 consecutive rows, the second 16 lanes 8 rows on), the
        tile grid of ``ctaLayout``, then repeats N-first to the shape."""
        check_shape(self.kind, shape, self.rank)
        rank = self.rank
        names = tl.dims(rank)
        m_i, n_i = rank - 2, rank - 1
        first, second = (names[m_i], names[n_i]) if self.transposed else (names[n_i], names[m_i])
        if self.version == 1:
            regs, lanes = [(0, 2), (0, 4), (0, 8)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 1)]
        else:
            regs, lanes = [(0, 1), (0, 2), (0, 4)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)]
        tile = LinearLayout.from_bases({"register": regs, "lane": lanes}, {first: 16, second: 16})
        rep = [names[d] for d in tl.matrix_order(rank, True)]
        if rank == 3:
            tile = tile * _id(1, "register", names[0]) * _id(1, "lane", names[0])
        cta = tile.transpose_outs(rep) * self._grid(self.register, self.warp).transpose_outs(rep)
        return tl.combine_cta_cga(cta, self.cga(), shape)

    def dot_operand_layout(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """A WMMA operand: ``kWidth`` registers along K, the non-K instruction size in lanes, the
        other lanes along K (version 1: the same K again), K repeated to the instruction's K;
        then the parent's tile grid with its K component dropped (registers) or broadcast
        (warps); repeats K-first to the shape."""
        rank = self.rank
        names = tl.dims(rank)
        order = tl.order_for_dot_operand(op_idx, rank, True)
        dim_k, dim_nonk = names[order[0]], names[order[1]]
        k_i = rank - 1 if op_idx == 0 else rank - 2
        m, n, k = self.instr_shape
        nonk = m if op_idx == 0 else n
        depth = WMMA_LANES // nonk
        tile = _id(k_width, "register", dim_k) * _id(nonk, "lane", dim_nonk)
        tile = tile * (
            LinearLayout.zeros1d(depth, "lane", dim_k) if self.version == 1 else _id(depth, "lane", dim_k)
        )
        tile = tile * _id(k // (depth * k_width), "register", dim_k)
        if rank == 3:
            tile = tile * _id(1, "register", names[order[2]]) * _id(1, "lane", names[order[2]])

        def drop_k(bases):
            return [[0 if d == k_i else c for d, c in enumerate(b)] for b in bases]

        regs = [b for b in drop_k(self.register) if any(b)]
        rep = [dim_k, dim_nonk] + ([names[order[2]]] if rank == 3 else [])
        cta = tile.transpose_outs(rep) * self._grid(regs, drop_k(self.warp)).transpose_outs(rep)
        return tl.combine_cta_cga(cta, self.cga(), shape)


@dataclass(frozen=True)
class AmdRotatingShared(SwizzledShared):
    """``#ttg.amd_rotating_shared``: a swizzled shared layout whose phase also rotates with
    the block of ``perPhase * maxPhase`` rows (phase XOR block number, Triton 3.9.0's
    ``sharedToLinearLayoutAMDRotating``). Triton's Python bindings cannot build its linear
    layout, so no oracle checks it; rows within one block equal ``swizzled_shared``'s.

    >>> r = parse_triton("#ttg.amd_rotating_shared<{vec = 1, perPhase = 1, maxPhase = 2, order = [1, 0]}>")
    >>> r.to_layout([4, 4]).as_dict()["offset"]
    [[0, 1], [0, 2], [1, 1], [2, 1]]
    """

    kind = "amd_rotating_shared"

    @staticmethod
    def parse(f: Fields) -> AmdRotatingShared:
        s = SwizzledShared.parse(f)
        return AmdRotatingShared(s.vec, s.per_phase, s.max_phase, s.order, s.cga_bases)

    def row_phase(self, row: int) -> int:
        phase = (row // self.per_phase) % self.max_phase
        block = row // self.max_phase // self.per_phase % self.max_phase
        return phase ^ block

    def text(self) -> str:
        return super().text().replace("#ttg.swizzled_shared<", "#ttg.amd_rotating_shared<", 1)


MFMA_FIELDS = ["version", "warpsPerCTA", "instrShape", "isTransposed", "tilesPerWarp", "elementBitWidth"]
MFMA_FIELDS.append("CGALayout")
register("amd_mfma", MFMA_FIELDS, AmdMfma.parse)
WMMA_FIELDS = ["version", "isTranspose", "ctaLayout", "instrShape", "rank", "CGALayout"]
register("amd_wmma", WMMA_FIELDS, AmdWmma.parse)
ROTATING_FIELDS = ["vec", "perPhase", "maxPhase", "order", "CGALayout"]
register("amd_rotating_shared", ROTATING_FIELDS, AmdRotatingShared.parse)
