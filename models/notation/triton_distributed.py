"""Triton's distributed layouts (``#ttg.blocked``, ``linear``, ``nvidia_mma``, ``dot_op``,
``slice``): which register, lane and warp hold each element, exactly as Triton 3.9 builds them.

>>> b = Blocked((1, 1), (1, 32), (1, 1), (1, 0))
>>> b.to_layout([16, 32]).as_dict()["lane"]
[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bankproof.models.errors import InputError, is_pow2
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import triton_ll as tl
from bankproof.models.notation.triton_fields import (
    Fields,
    TritonLayout,
    bases_tuple,
    cga_layout,
    cga_text,
    check_shape,
    fmt_value,
)


@dataclass(frozen=True)
class Blocked(TritonLayout):
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "blocked"

    @staticmethod
    def parse(f: Fields) -> Blocked:
        spt = f.ints("sizePerThread", pow2=True)
        rank = len(spt)
        if rank == 0:
            raise InputError(f.kind, "sizePerThread", "must not be empty")
        # Any power of two, as Triton 3.9.0 parses it (64-lane warps exist); the bank model
        # refuses warps other than 32 lanes when it is asked to count them.
        tpw = f.ints("threadsPerWarp", pow2=True, rank=rank)
        wpc = f.ints("warpsPerCTA", pow2=True, rank=rank)
        order = f.order("order", rank)
        return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order), bases_tuple(cga_layout(f, rank)))

    @property
    def rank(self) -> int:
        return len(self.order)

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        return (
            f"#ttg.blocked<{{sizePerThread = {fmt_value(self.size_per_thread)}, threadsPerWarp = "
            f"{fmt_value(self.threads_per_warp)}, warpsPerCTA = {fmt_value(self.warps_per_cta)}, order = "
            f"{fmt_value(self.order)}{cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        cta = (
            tl.identity_standard_nd("register", self.size_per_thread, self.order)
            * tl.identity_standard_nd("lane", self.threads_per_warp, self.order)
            * tl.identity_standard_nd("warp", self.warps_per_cta, self.order)
        )
        return tl.combine_cta_cga(cta, self.cga(), shape, drop_registers=True)


MAX_BASES = 32  # bases of one input dim of a linear layout


@dataclass(frozen=True)
class Linear(TritonLayout):
    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]
    block: tuple[tuple[int, ...], ...]
    kind = "linear"

    @staticmethod
    def parse(f: Fields) -> Linear:
        reg = f.bases("register")
        rank = len(reg[0]) if reg else None
        lane = f.bases("lane", rank=rank)
        rank = rank or (len(lane[0]) if lane else None)
        warp = f.bases("warp", [], rank=rank)
        block = f.bases("block", [], rank=rank)
        if rank is None:
            raise InputError(f.kind, "register", "cannot fix the rank: no bases given")
        for name, bs in (("register", reg), ("lane", lane), ("warp", warp), ("block", block)):
            if len(bs) > MAX_BASES:
                why = f"has more than {MAX_BASES} bases (2^{MAX_BASES} of any is past a GPU)"
                raise InputError(f.kind, name, why, len(bs))
            for b in bs:
                if len(b) != rank:
                    raise InputError(f.kind, name, f"bases must have {rank} coordinates", fmt_value(b))
                if any(x and not is_pow2(x) for x in b):
                    raise InputError(f.kind, name, "coordinates must be 0 or powers of two", fmt_value(b))
        return Linear(bases_tuple(reg), bases_tuple(lane), bases_tuple(warp), bases_tuple(block))

    @property
    def rank(self) -> int:
        for bs in (self.register, self.lane, self.warp, self.block):
            if bs:
                return len(bs[0])
        return 0

    def layout(self) -> LinearLayout:
        bases = {"register": self.register, "lane": self.lane, "warp": self.warp, "block": self.block}
        return LinearLayout.from_bases(bases, tl.dims(self.rank))

    def text(self) -> str:
        return (
            f"#ttg.linear<{{register = {fmt_value(self.register)}, lane = {fmt_value(self.lane)}, warp = "
            f"{fmt_value(self.warp)}, block = {fmt_value(self.block)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        ll = self.layout()
        canonical = ll.out_dim_names
        order: list[int] = []
        for b in ll.in_bases("register"):
            nz = [i for i, c in enumerate(b) if c]
            if nz and nz[0] not in order:
                order.append(nz[0])
        order += [d for d in range(self.rank - 1, -1, -1) if d not in order]
        permuted = [canonical[d] for d in order]
        named = {canonical[d]: shape[d] for d in range(self.rank)}
        ll = ll.transpose_outs(permuted)
        ll = tl.ensure_not_smaller(ll, named)
        ll = tl.ensure_not_larger(ll, named, broadcast_registers=False)
        return ll.transpose_outs(canonical)


@dataclass(frozen=True)
class NvidiaMma(TritonLayout):
    version_major: int
    version_minor: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "nvidia_mma"

    @staticmethod
    def parse(f: Fields) -> NvidiaMma:
        major = f.int("versionMajor")
        if major not in (2, 3):
            raise InputError(f.kind, "versionMajor", "must be 2 (Ampere mma) or 3 (Hopper wgmma)", major)
        minor = f.int("versionMinor", 0)
        wpc = f.ints("warpsPerCTA", pow2=True)
        rank = len(wpc)
        if rank not in (2, 3) or (major == 3 and rank != 2):
            raise InputError(
                f.kind, "warpsPerCTA", "must have 2 entries (or 3 for versionMajor 2)", fmt_value(wpc)
            )
        instr = f.ints("instrShape", pow2=False)
        if major == 2:
            want = [16, 8] if rank == 2 else [1, 16, 8]
            if instr != want:
                raise InputError(
                    f.kind, "instrShape", f"must be {fmt_value(want)} for versionMajor 2", fmt_value(instr)
                )
        else:
            if len(instr) != 3 or instr[0] != 16 or instr[1] % 8 or not 8 <= instr[1] <= 256:
                raise InputError(
                    f.kind,
                    "instrShape",
                    "must be [16, N, K] with N a multiple of 8 in 8..256 for versionMajor 3",
                    fmt_value(instr),
                )
        return NvidiaMma(major, minor, tuple(wpc), tuple(instr), bases_tuple(cga_layout(f, rank)))

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def hopper(self) -> bool:
        return self.version_major == 3

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        return (
            f"#ttg.nvidia_mma<{{versionMajor = {self.version_major}, versionMinor = {self.version_minor}, "
            f"warpsPerCTA = {fmt_value(self.warps_per_cta)}, instrShape = {fmt_value(self.instr_shape)}"
            f"{cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        if self.hopper and not is_pow2(self.instr_shape[1]):
            raise InputError(
                self.kind,
                "instrShape",
                "N must be a power of two for a linear layout",
                fmt_value(self.instr_shape),
            )
        tile = list(self.instr_shape) if not self.hopper else list(self.instr_shape[:2])
        order = tl.matrix_order(self.rank, True)
        cta = tl.mma_tile(tile, 2, order, order)
        warps = tl.identity_standard_nd(
            "warp", self.warps_per_cta, tl.matrix_order(self.rank, not self.hopper)
        )
        cta = cta * warps.transpose_outs(cta.out_dim_names)
        return tl.combine_cta_cga(cta, self.cga(), shape)


@dataclass(frozen=True)
class DotOperand(TritonLayout):
    op_idx: int
    parent: TritonLayout
    k_width: int
    kind = "dot_op"

    @staticmethod
    def parse(f: Fields, parent: TritonLayout) -> DotOperand:
        op_idx = f.int("opIdx")
        if op_idx not in (0, 1):
            raise InputError(f.kind, "opIdx", "must be 0 or 1", op_idx)
        if isinstance(parent, NvidiaMma):
            k_width = f.int("kWidth", pow2=True)
            if parent.hopper and op_idx == 1:
                raise InputError(
                    f.kind,
                    "opIdx",
                    "must be 0 with a versionMajor 3 parent (wgmma reads B from shared memory)",
                    1,
                )
            if parent.rank not in (2, 3):
                raise InputError(f.kind, "parent", "must have rank 2 or 3")
        elif hasattr(parent, "dot_operand_layout"):  # amd_mfma and amd_wmma parents (triton_mfma)
            k_width = f.int("kWidth", pow2=True)
            if parent.kind == "amd_wmma" and parent.version == 1 and k_width not in (8, 16):
                raise InputError(f.kind, "kWidth", "must be 8 or 16 for a WMMA version 1 parent", k_width)
        elif isinstance(parent, Blocked):
            k_width = f.int("kWidth", 0)
            if parent.rank not in (2, 3):
                raise InputError(f.kind, "parent", "must have rank 2 or 3", parent.rank)
        else:
            raise InputError(
                f.kind, "parent", "must be a nvidia_mma, amd_mfma, amd_wmma or blocked layout", parent.text()
            )
        return DotOperand(op_idx, parent, k_width)

    @property
    def rank(self) -> int:
        return self.parent.rank

    def cga(self) -> list[list[int]]:
        """The parent's CGA with the K dim broadcast (every CTA needs all of K)."""
        k_dim = self.rank - 1 if self.op_idx == 0 else self.rank - 2
        return [[0 if d == k_dim else c for d, c in enumerate(b)] for b in self.parent.cga()]

    def text(self) -> str:
        kw = f", kWidth = {self.k_width}" if self.k_width else ""
        return f"#ttg.dot_op<{{opIdx = {self.op_idx}, parent = {self.parent.text()}{kw}}}>"

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        rank = self.rank
        names = tl.dims(rank)
        if hasattr(self.parent, "dot_operand_layout"):
            return self.parent.dot_operand_layout(self.op_idx, self.k_width, shape)
        if isinstance(self.parent, Blocked):
            p = self.parent
            k_dim = rank - 1 if self.op_idx == 0 else rank - 2
            size = list(p.size_per_thread)
            size[k_dim] = shape[k_dim]
            rep = [names[i] for i in p.order]
            regs = tl.identity_standard_nd("register", size, p.order)
            lanes = tl.broadcasted_dot_operand(p.threads_per_warp, p.order, k_dim, "lane")
            warps = tl.broadcasted_dot_operand(p.warps_per_cta, p.order, k_dim, "warp")
            cta = regs.transpose_outs(rep) * lanes.transpose_outs(rep) * warps.transpose_outs(rep)
            return tl.combine_cta_cga(cta, self.cga(), shape)
        mma = self.parent
        assert isinstance(mma, NvidiaMma)
        is_a = self.op_idx == 0
        tile = [1] * rank
        if is_a:
            tile[rank - 2], tile[rank - 1] = 16, self.k_width * 8
        else:
            tile[rank - 2], tile[rank - 1] = self.k_width * 8, 8
        order = tl.order_for_dot_operand(self.op_idx, rank, True)
        cta = tl.mma_tile(tile, self.k_width, order, order)
        k_dim = rank - 1 if is_a else rank - 2
        warp_order = tl.matrix_order(rank, not mma.hopper)
        warps = tl.broadcasted_dot_operand(mma.warps_per_cta, warp_order, k_dim, "warp")
        cta = cta * warps.transpose_outs(cta.out_dim_names)
        return tl.combine_cta_cga(cta, self.cga(), shape)


@dataclass(frozen=True)
class Slice(TritonLayout):
    dim: int
    parent: TritonLayout
    kind = "slice"

    @staticmethod
    def parse(f: Fields, parent: TritonLayout) -> Slice:
        if parent.memory:
            raise InputError(f.kind, "parent", "must be a distributed layout", parent.text())
        dim = f.int("dim")
        if dim >= parent.rank:
            raise InputError(f.kind, "dim", f"must be < the parent's rank {parent.rank}", dim)
        if parent.rank < 2:
            raise InputError(f.kind, "parent", "must have rank >= 2", parent.text())
        return Slice(dim, parent)

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def cga(self) -> list[list[int]]:
        return self.parent.cga()

    def text(self) -> str:
        return f"#ttg.slice<{{dim = {self.dim}, parent = {self.parent.text()}}}>"

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        parent_shape = list(shape)
        parent_shape.insert(self.dim, 1)
        parent = self.parent.to_layout(parent_shape)
        assert isinstance(parent, LinearLayout)
        out = tl.remove_dim(parent, self.dim)
        regs = [b for b in out.in_bases("register") if any(b)]
        return out.with_in_bases("register", regs).transpose_ins(out.in_dim_names)
