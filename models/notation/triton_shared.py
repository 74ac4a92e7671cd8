"""Triton's shared-memory layouts (``#ttg.swizzled_shared``, ``nvmma_shared``, ``shared_linear``,
``padded_shared``): the element each byte offset holds, exactly as Triton 3.9 builds them.

>>> SwizzledShared(2, 1, 16, (1, 0)).text()
'#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import triton_ll as tl
from bankproof.models.notation.triton_fields import (
    MAX_FIELD,
    Fields,
    TritonLayout,
    bases_tuple,
    cga_layout,
    cga_text,
    check_shape,
    fmt_value,
    product_of,
)


@dataclass(frozen=True)
class SwizzledShared(TritonLayout):
    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "swizzled_shared"
    memory = True

    @staticmethod
    def parse(f: Fields) -> SwizzledShared:
        vec = f.int("vec", pow2=True)
        per_phase = f.int("perPhase", pow2=True)
        max_phase = f.int("maxPhase", pow2=True)
        order = f.ints("order")
        order = f.order("order", len(order))
        return SwizzledShared(vec, per_phase, max_phase, tuple(order), bases_tuple(cga_layout(f, len(order))))

    @property
    def rank(self) -> int:
        return len(self.order)

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def row_phase(self, row: int) -> int:
        """The swizzle phase of a row (a power of two): which ``vec`` group it XORs in."""
        return (row // self.per_phase) % self.max_phase

    def text(self) -> str:
        return (
            f"#ttg.swizzled_shared<{{vec = {self.vec}, perPhase = {self.per_phase}, maxPhase = "
            f"{self.max_phase}, order = {fmt_value(self.order)}{cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        per_cta = tl.shape_per_cta(shape, self.cga())
        names = tl.dims(self.rank)
        if self.rank == 1:
            return tl.combine_cta_cga(
                LinearLayout.identity1d(per_cta[0], "offset", "dim0"), self.cga(), shape
            )
        col, row = self.order[0], self.order[1]
        ncols, nrows = per_cta[col], per_cta[row]
        bases = [[0, 1 << i] for i in range(log2(ncols))]
        for i in range(log2(nrows)):
            r = 1 << i
            bases.append([r, (self.vec * self.row_phase(r)) % ncols])
        cta = LinearLayout.from_bases({"offset": bases}, [names[row], names[col]])
        for d in self.order[2:]:
            cta = cta * LinearLayout.identity1d(per_cta[d], "offset", names[d])
        return tl.combine_cta_cga(cta, self.cga(), shape)


@dataclass(frozen=True)
class NVMMAShared(TritonLayout):
    swizzle: int
    transposed: bool
    element_bits: int
    fp4_padded: bool = False
    cga_bases: tuple[tuple[int, ...], ...] = ()
    rank_field: int = 2  # Triton 3.9's ``rank = N`` (written when N != 2 and no CGALayout fixes it)
    kind = "nvmma_shared"
    memory = True

    @staticmethod
    def parse(f: Fields) -> NVMMAShared:
        swizzle = f.int("swizzlingByteWidth")
        if swizzle not in (0, 32, 64, 128):
            raise InputError(f.kind, "swizzlingByteWidth", "must be 0, 32, 64 or 128", swizzle)
        transposed = f.bool("transposed", False)
        bits = f.int("elementBitWidth")
        if bits not in (8, 16, 32, 64):
            raise InputError(f.kind, "elementBitWidth", "must be 8, 16, 32 or 64", bits)
        fp4 = f.bool("fp4Padded", False)
        if fp4 and (swizzle != 128 or bits != 8):
            raise InputError(
                f.kind, "fp4Padded", "needs swizzlingByteWidth = 128 and elementBitWidth = 8", "true"
            )
        cga = f.bases("CGALayout", [])
        rank = f.int("rank", len(cga[0]) if cga else 2, minimum=1)
        if cga and rank != len(cga[0]):
            raise InputError(f.kind, "rank", f"must equal the CGALayout's rank ({len(cga[0])})", rank)
        return NVMMAShared(swizzle, transposed, bits, fp4, bases_tuple(cga_layout(f, rank)), rank)

    @property
    def rank(self) -> int:
        """``rank`` as written (2 when absent), or the CGALayout's."""
        return len(self.cga_bases[0]) if self.cga_bases else self.rank_field

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        fp4 = ", fp4Padded = true" if self.fp4_padded else ""
        rank = f", rank = {self.rank_field}" if not self.cga_bases and self.rank_field != 2 else ""
        return (
            f"#ttg.nvmma_shared<{{swizzlingByteWidth = {self.swizzle}, transposed = "
            f"{fmt_value(self.transposed)}, elementBitWidth = {self.element_bits}{fp4}{rank}"
            f"{cga_text(self.cga_bases)}}}>"
        )

    def tma_block_shape(self, per_cta: Sequence[int]) -> list[int]:
        """The TMA box: every dim at most 256, the contiguous dim exactly one swizzle row."""
        block = list(per_cta)
        contig = 0 if self.transposed else len(block) - 1
        if self.fp4_padded:
            block[contig] *= 2
        block = [min(s, 256) for s in block]
        if self.swizzle:
            want = 8 * self.swizzle // self.element_bits
            if block[contig] < want:
                raise InputError(
                    self.kind,
                    "shape",
                    f"contiguous dim too small for a {self.swizzle}-byte swizzle of "
                    f"{self.element_bits}-bit elements (needs >= {want // (2 if self.fp4_padded else 1)})",
                    per_cta[contig],
                )
            block[contig] = want
        if self.fp4_padded:
            block[contig] //= 2
        return block

    def core_matrix(self) -> LinearLayout:
        """One 8-row swizzle atom, ``offset -> (row, col)``."""
        bits = self.element_bits
        vec = 128 // bits
        per_phase = {32: 4, 64: 2, 128: 1}[self.swizzle]
        max_phase = {32: 2, 64: 4, 128: 8}[self.swizzle]
        cols = 8 * max(16, self.swizzle) // bits
        bases = []
        for i in range(log2(cols)):
            c = 1 << i
            bases.append([0, c // 16 * 8 + c % 8 if self.fp4_padded else c])
        for i in range(3):
            r = 1 << i
            c = vec * ((r // per_phase) % max_phase)
            bases.append([r, c // 16 * 8 + c % 8 if self.fp4_padded else c])
        return LinearLayout.from_bases({"offset": bases}, tl.dims(2))

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        rank = len(shape)
        if rank != self.rank:
            raise InputError(
                self.kind,
                "shape",
                f"must have {self.rank} dims (the layout's rank: its rank field, or its CGALayout's; 2 when "
                "neither is written)",
                "x".join(map(str, shape)),
            )
        check_shape(self.kind, shape, rank)
        if self.transposed and self.swizzle == 0 and rank > 2:
            raise InputError(
                self.kind,
                "transposed",
                "with swizzlingByteWidth = 0 is supported for rank 2 only "
                "(Triton 3.9 builds a non-injective layout for higher ranks)",
                "true",
            )
        per_cta = tl.shape_per_cta(shape, self.cga())
        names = tl.dims(rank)
        tma = self.tma_block_shape(per_cta)
        if self.swizzle == 0:
            order = list(range(rank - 1, -1, -1))
            if self.transposed:
                order = [0] + order[:-1]
            layout = LinearLayout.empty()
            for i in order:
                layout = layout * LinearLayout.identity1d(tma[i], "offset", names[i])
            # Beyond the 256-element TMA box, Triton 3.9 repeats the box last dim first.
            layout = tl.ensure_not_smaller(layout, dict(zip(names, per_cta)), names[::-1])
            return tl.combine_cta_cga(layout, self.cga(), shape)
        if rank < 2:
            raise InputError(
                self.kind,
                "shape",
                "must have at least 2 dims for a swizzled layout",
                "x".join(map(str, shape)),
            )
        collapsed = [product_of(tma[:-1]), tma[-1]]
        if self.transposed:
            collapsed.reverse()
        tile = self.core_matrix()
        if collapsed[0] < 8:
            raise InputError(
                self.kind, "shape", "needs at least 8 rows per swizzle atom", "x".join(map(str, shape))
            )
        layout = tl.ensure_not_smaller(tile, dict(zip(tl.dims(2), collapsed)), tl.dims(2))
        target = list(tma)
        if self.transposed:
            target = target[1:] + target[:1]
        layout = layout.reshape_row_major(target)
        if self.transposed:
            layout = tl.transpose_dims(layout, [rank - 1] + list(range(rank - 1)))
        layout = tl.ensure_not_smaller(layout, dict(zip(names, per_cta)), names)
        return tl.combine_cta_cga(layout, self.cga(), shape)


@dataclass(frozen=True)
class SharedLinear(TritonLayout):
    offset: tuple[tuple[int, ...], ...]
    block: tuple[tuple[int, ...], ...]
    alignment: int
    kind = "shared_linear"
    memory = True

    @staticmethod
    def parse(f: Fields, trailing: Mapping[str, object]) -> SharedLinear:
        offset = f.bases("offset")
        if not offset:
            raise InputError(f.kind, "offset", "must have at least one basis")
        rank = len(offset[0])
        block = f.bases("block", [], rank=rank)
        for b in offset:
            if len(b) != rank:
                raise InputError(f.kind, "offset", f"bases must have {rank} coordinates", fmt_value(b))
        t = Fields(f.kind, trailing, ["alignment"])
        alignment = t.int("alignment", 16, pow2=True)
        return SharedLinear(bases_tuple(offset), bases_tuple(block), alignment)

    @property
    def rank(self) -> int:
        return len(self.offset[0])

    def layout(self) -> LinearLayout:
        return LinearLayout.from_bases({"offset": self.offset, "block": self.block}, tl.dims(self.rank))

    def text(self) -> str:
        block = f", block = {fmt_value(self.block)}" if self.block else ""
        offset = fmt_value(self.offset)
        return f"#ttg.shared_linear<{{offset = {offset}{block}}}, alignment = {self.alignment}>"

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        check_shape(self.kind, shape, self.rank)
        ll = self.layout()
        have = [ll.out_dim_size(n) for n in ll.out_dim_names]
        if list(shape) != have:
            raise InputError(
                self.kind,
                "shape",
                f"must be {'x'.join(map(str, have))}, the shape its bases cover",
                "x".join(map(str, shape)),
            )
        return ll


@dataclass(frozen=True)
class PaddedShared(TritonLayout):
    intervals: tuple[tuple[int, int], ...]
    order: tuple[int, ...] = ()
    shape: tuple[int, ...] = ()
    offset: tuple[tuple[int, ...], ...] = ()
    block: tuple[tuple[int, ...], ...] = ()
    kind = "padded_shared"
    memory = True

    @staticmethod
    def parse(f: Fields, intervals: Sequence[tuple[int, int]]) -> PaddedShared:
        if not intervals:
            raise InputError(f.kind, "intervals", "must list at least one [interval:+pad]")
        for interval, pad in intervals:
            if not is_pow2(interval) or interval > MAX_FIELD:
                raise InputError(f.kind, "interval", f"must be a power of two up to {MAX_FIELD}", interval)
            if not is_pow2(pad) or pad > MAX_FIELD:
                raise InputError(f.kind, "padding", f"must be a power of two up to {MAX_FIELD}", pad)
        if len({i for i, _ in intervals}) != len(intervals):
            raise InputError(f.kind, "intervals", "must be distinct", fmt_value([list(x) for x in intervals]))
        if "offset" in f.params:
            offset = f.bases("offset")
            rank = len(offset[0]) if offset else 0
            block = f.bases("block", [], rank=rank)
            return PaddedShared(tuple(intervals), offset=bases_tuple(offset), block=bases_tuple(block))
        shape = f.ints("shape", pow2=True)
        order = f.order("order", len(shape))
        return PaddedShared(tuple(intervals), order=tuple(order), shape=tuple(shape))

    @property
    def rank(self) -> int:
        return len(self.offset[0]) if self.offset else len(self.order)

    def linear_component(self) -> LinearLayout:
        if self.offset:
            return LinearLayout.from_bases({"offset": self.offset, "block": self.block}, tl.dims(self.rank))
        ll = tl.identity_standard_nd("offset", self.shape, self.order).transpose_outs(tl.dims(self.rank))
        return ll.with_in_bases("block", [])

    def text(self) -> str:
        iv = ", ".join(f"{i}:+{p}" for i, p in self.intervals)
        if self.offset:
            body = f"offset = {fmt_value(self.offset)}, block = {fmt_value(self.block)}"
        else:
            body = f"order = {fmt_value(self.order)}, shape = {fmt_value(self.shape)}"
        return f"#ttg.padded_shared<[{iv}] {{{body}}}>"

    def to_layout(self, shape: Sequence[int]) -> PaddedLayout:
        check_shape(self.kind, shape, self.rank)
        ll = self.linear_component()
        have = [ll.out_dim_size(n) for n in ll.out_dim_names]
        if list(shape) != have:
            raise InputError(
                self.kind,
                "shape",
                f"must be {'x'.join(map(str, have))}, the shape of its linear component",
                "x".join(map(str, shape)),
            )
        return PaddedLayout(ll, self.intervals)
