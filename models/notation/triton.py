"""Triton TTGIR layout attributes: parsed, printed back as Triton prints them, and turned into
linear layouts exactly as Triton 3.9 does (``to_linear_layout``).

>>> a = parse_triton("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>")
>>> a.to_layout([16, 32]).as_dict()["offset"][5:]
[[1, 2], [2, 4], [4, 8], [8, 16]]
>>> a.text()
'#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import triton_ll as tl
from bankproof.models.notation.mlir import Attribute, parse_attribute


# ----- field readers ---------------------------------------------------------------------------
def _fmt(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, TritonLayout):
        return v.text()
    return str(v)


class _Fields:
    """Reads and checks an attribute's fields, naming the kind and field in every error."""

    def __init__(self, kind: str, params: Mapping[str, object], allowed: Sequence[str]):
        self.kind = kind
        self.params = dict(params)
        for key in self.params:
            if key not in allowed:
                raise InputError(kind, key, f"is not a field of {kind} (fields: {', '.join(allowed)})")

    def get(self, key: str, default: object = ...) -> object:
        if key not in self.params:
            if default is ...:
                raise InputError(self.kind, key, "is missing")
            return default
        return self.params[key]

    def int(self, key: str, default: object = ..., pow2: bool = False, minimum: int = 0) -> int:
        v = self.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool):
            raise InputError(self.kind, key, "must be an integer", _fmt(v))
        if pow2 and not is_pow2(v):
            raise InputError(self.kind, key, "must be a power of two", v)
        if v < minimum:
            raise InputError(self.kind, key, f"must be >= {minimum}", v)
        return v

    def bool(self, key: str, default: object = ...) -> bool:
        v = self.get(key, default)
        if not isinstance(v, bool):
            raise InputError(self.kind, key, "must be true or false", _fmt(v))
        return v

    def ints(self, key: str, default: object = ..., pow2: bool = False, rank: int | None = None) -> list[int]:
        v = self.get(key, default)
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise InputError(self.kind, key, "must be a list of integers", _fmt(v))
        if rank is not None and len(v) != rank:
            raise InputError(self.kind, key, f"must have {rank} entries (the layout's rank)", _fmt(v))
        if pow2:
            for x in v:
                if not is_pow2(x):
                    raise InputError(self.kind, key, "entries must be powers of two", _fmt(v))
        return list(v)

    def order(self, key: str, rank: int) -> list[int]:
        v = self.ints(key, rank=rank)
        if sorted(v) != list(range(rank)):
            raise InputError(self.kind, key, f"must be a permutation of 0..{rank - 1}", _fmt(v))
        return v

    def bases(self, key: str, default: object = ..., rank: int | None = None) -> list[list[int]]:
        v = self.get(key, default)
        ok = isinstance(v, list) and all(
            isinstance(b, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in b)
            for b in v
        )
        if not ok:
            raise InputError(
                self.kind,
                key,
                "must be a list of bases [[c0, c1, ...], ...] of non-negative integers",
                _fmt(v),
            )
        for b in v:
            if rank is not None and len(b) != rank:
                raise InputError(self.kind, key, f"bases must have {rank} coordinates", _fmt(b))
        return [list(b) for b in v]


def _check_shape(kind: str, shape: Sequence[int], rank: int) -> None:
    if len(shape) != rank:
        raise InputError(
            kind, "shape", f"must have {rank} dims (the layout's rank)", "x".join(map(str, shape))
        )
    for s in shape:
        if not is_pow2(s):
            raise InputError(kind, "shape", "sizes must be powers of two", "x".join(map(str, shape)))


def _cga(f: _Fields, rank: int) -> list[list[int]]:
    cga = f.bases("CGALayout", [], rank=rank)
    for b in cga:
        if any(x and not is_pow2(x) for x in b):
            raise InputError(f.kind, "CGALayout", "coordinates must be 0 or powers of two", _fmt(b))
    return cga


def _cga_text(cga: Sequence[Sequence[int]]) -> str:
    return f", CGALayout = {_fmt([list(b) for b in cga])}" if cga else ""


# ----- the kinds -------------------------------------------------------------------------------
class TritonLayout:
    """Common interface: ``kind``, ``rank``, ``text()``, ``to_layout(shape)``."""

    kind = ""
    memory = False

    @property
    def rank(self) -> int:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def to_layout(self, shape: Sequence[int]) -> LinearLayout | PaddedLayout:
        raise NotImplementedError

    def cga(self) -> list[list[int]]:
        return []


@dataclass(frozen=True)
class Blocked(TritonLayout):
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_bases: tuple[tuple[int, ...], ...] = ()
    kind = "blocked"

    @staticmethod
    def parse(f: _Fields) -> Blocked:
        spt = f.ints("sizePerThread", pow2=True)
        rank = len(spt)
        if rank == 0:
            raise InputError(f.kind, "sizePerThread", "must not be empty")
        # Any power of two, as Triton 3.9.0 parses it (64-lane warps exist); the bank model
        # refuses warps other than 32 lanes when it is asked to count them.
        tpw = f.ints("threadsPerWarp", pow2=True, rank=rank)
        wpc = f.ints("warpsPerCTA", pow2=True, rank=rank)
        order = f.order("order", rank)
        return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order), _t(_cga(f, rank)))

    @property
    def rank(self) -> int:
        return len(self.order)

    def cga(self) -> list[list[int]]:
        return [list(b) for b in self.cga_bases]

    def text(self) -> str:
        return (
            f"#ttg.blocked<{{sizePerThread = {_fmt(self.size_per_thread)}, threadsPerWarp = "
            f"{_fmt(self.threads_per_warp)}, warpsPerCTA = {_fmt(self.warps_per_cta)}, order = "
            f"{_fmt(self.order)}{_cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        _check_shape(self.kind, shape, self.rank)
        cta = (
            tl.identity_standard_nd("register", self.size_per_thread, self.order)
            * tl.identity_standard_nd("lane", self.threads_per_warp, self.order)
            * tl.identity_standard_nd("warp", self.warps_per_cta, self.order)
        )
        return tl.combine_cta_cga(cta, self.cga(), shape, drop_registers=True)


@dataclass(frozen=True)
class Linear(TritonLayout):
    register: tuple[tuple[int, ...], ...]
    lane: tuple[tuple[int, ...], ...]
    warp: tuple[tuple[int, ...], ...]
    block: tuple[tuple[int, ...], ...]
    kind = "linear"

    @staticmethod
    def parse(f: _Fields) -> Linear:
        reg = f.bases("register")
        rank = len(reg[0]) if reg else None
        lane = f.bases("lane", rank=rank)
        rank = rank or (len(lane[0]) if lane else None)
        warp = f.bases("warp", [], rank=rank)
        block = f.bases("block", [], rank=rank)
        if rank is None:
            raise InputError(f.kind, "register", "cannot fix the rank: no bases given")
        for name, bs in (("register", reg), ("lane", lane), ("warp", warp), ("block", block)):
            for b in bs:
                if len(b) != rank:
                    raise InputError(f.kind, name, f"bases must have {rank} coordinates", _fmt(b))
                if any(x and not is_pow2(x) for x in b):
                    raise InputError(f.kind, name, "coordinates must be 0 or powers of two", _fmt(b))
        return Linear(_t(reg), _t(lane), _t(warp), _t(block))

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
            f"#ttg.linear<{{register = {_fmt(self.register)}, lane = {_fmt(self.lane)}, warp = "
            f"{_fmt(self.warp)}, block = {_fmt(self.block)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        _check_shape(self.kind, shape, self.rank)
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
    def parse(f: _Fields) -> NvidiaMma:
        major = f.int("versionMajor")
        if major not in (2, 3):
            raise InputError(f.kind, "versionMajor", "must be 2 (Ampere mma) or 3 (Hopper wgmma)", major)
        minor = f.int("versionMinor", 0)
        wpc = f.ints("warpsPerCTA", pow2=True)
        rank = len(wpc)
        if rank not in (2, 3) or (major == 3 and rank != 2):
            raise InputError(
                f.kind, "warpsPerCTA", "must have 2 entries (or 3 for versionMajor 2)", _fmt(wpc)
            )
        instr = f.ints("instrShape", pow2=False)
        if major == 2:
            want = [16, 8] if rank == 2 else [1, 16, 8]
            if instr != want:
                raise InputError(
                    f.kind, "instrShape", f"must be {_fmt(want)} for versionMajor 2", _fmt(instr)
                )
        else:
            if len(instr) != 3 or instr[0] != 16 or instr[1] % 8 or not 8 <= instr[1] <= 256:
                raise InputError(
                    f.kind,
                    "instrShape",
                    "must be [16, N, K] with N a multiple of 8 in 8..256 for versionMajor 3",
                    _fmt(instr),
                )
        return NvidiaMma(major, minor, tuple(wpc), tuple(instr), _t(_cga(f, rank)))

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
            f"warpsPerCTA = {_fmt(self.warps_per_cta)}, instrShape = {_fmt(self.instr_shape)}"
            f"{_cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        _check_shape(self.kind, shape, self.rank)
        if self.hopper and not is_pow2(self.instr_shape[1]):
            raise InputError(
                self.kind,
                "instrShape",
                "N must be a power of two for a linear layout",
                _fmt(self.instr_shape),
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
    def parse(f: _Fields, parent: TritonLayout) -> DotOperand:
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
        _check_shape(self.kind, shape, self.rank)
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
    def parse(f: _Fields, parent: TritonLayout) -> Slice:
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
        _check_shape(self.kind, shape, self.rank)
        parent_shape = list(shape)
        parent_shape.insert(self.dim, 1)
        parent = self.parent.to_layout(parent_shape)
        assert isinstance(parent, LinearLayout)
        out = tl.remove_dim(parent, self.dim)
        regs = [b for b in out.in_bases("register") if any(b)]
        return out.with_in_bases("register", regs).transpose_ins(out.in_dim_names)


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
    def parse(f: _Fields) -> SwizzledShared:
        vec = f.int("vec", pow2=True)
        per_phase = f.int("perPhase", pow2=True)
        max_phase = f.int("maxPhase", pow2=True)
        order = f.ints("order")
        order = f.order("order", len(order))
        return SwizzledShared(vec, per_phase, max_phase, tuple(order), _t(_cga(f, len(order))))

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
            f"{self.max_phase}, order = {_fmt(self.order)}{_cga_text(self.cga_bases)}}}>"
        )

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        _check_shape(self.kind, shape, self.rank)
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
    def parse(f: _Fields) -> NVMMAShared:
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
        return NVMMAShared(swizzle, transposed, bits, fp4, _t(_cga(f, rank)), rank)

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
            f"{_fmt(self.transposed)}, elementBitWidth = {self.element_bits}{fp4}{rank}"
            f"{_cga_text(self.cga_bases)}}}>"
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
        _check_shape(self.kind, shape, rank)
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
        collapsed = [_prod(tma[:-1]), tma[-1]]
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
    def parse(f: _Fields, trailing: Mapping[str, object]) -> SharedLinear:
        offset = f.bases("offset")
        if not offset:
            raise InputError(f.kind, "offset", "must have at least one basis")
        rank = len(offset[0])
        block = f.bases("block", [], rank=rank)
        for b in offset:
            if len(b) != rank:
                raise InputError(f.kind, "offset", f"bases must have {rank} coordinates", _fmt(b))
        t = _Fields(f.kind, trailing, ["alignment"])
        alignment = t.int("alignment", 16, pow2=True)
        return SharedLinear(_t(offset), _t(block), alignment)

    @property
    def rank(self) -> int:
        return len(self.offset[0])

    def layout(self) -> LinearLayout:
        return LinearLayout.from_bases({"offset": self.offset, "block": self.block}, tl.dims(self.rank))

    def text(self) -> str:
        block = f", block = {_fmt(self.block)}" if self.block else ""
        return f"#ttg.shared_linear<{{offset = {_fmt(self.offset)}{block}}}, alignment = {self.alignment}>"

    def to_layout(self, shape: Sequence[int]) -> LinearLayout:
        _check_shape(self.kind, shape, self.rank)
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
    def parse(f: _Fields, intervals: Sequence[tuple[int, int]]) -> PaddedShared:
        if not intervals:
            raise InputError(f.kind, "intervals", "must list at least one [interval:+pad]")
        for interval, pad in intervals:
            if not is_pow2(interval):
                raise InputError(f.kind, "interval", "must be a power of two", interval)
            if not is_pow2(pad):
                raise InputError(f.kind, "padding", "must be a power of two", pad)
        if len({i for i, _ in intervals}) != len(intervals):
            raise InputError(f.kind, "intervals", "must be distinct", _fmt([list(x) for x in intervals]))
        if "offset" in f.params:
            offset = f.bases("offset")
            rank = len(offset[0]) if offset else 0
            block = f.bases("block", [], rank=rank)
            return PaddedShared(tuple(intervals), offset=_t(offset), block=_t(block))
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
            body = f"offset = {_fmt(self.offset)}, block = {_fmt(self.block)}"
        else:
            body = f"order = {_fmt(self.order)}, shape = {_fmt(self.shape)}"
        return f"#ttg.padded_shared<[{iv}] {{{body}}}>"

    def to_layout(self, shape: Sequence[int]) -> PaddedLayout:
        _check_shape(self.kind, shape, self.rank)
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


# ----- dispatch --------------------------------------------------------------------------------
_FIELDS = {
    "blocked": ["sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "CGALayout"],
    "linear": ["register", "lane", "warp", "block"],
    "nvidia_mma": ["versionMajor", "versionMinor", "warpsPerCTA", "instrShape", "CGALayout"],
    "dot_op": ["opIdx", "parent", "kWidth"],
    "slice": ["dim", "parent"],
    "swizzled_shared": ["vec", "perPhase", "maxPhase", "order", "CGALayout"],
    "nvmma_shared": ["swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank", "CGALayout"],
    "shared_linear": ["offset", "block"],
    "padded_shared": ["order", "shape", "offset", "block"],
}
_PARSERS: dict = {}  # kinds other modules add (triton_mfma), with their own parse functions


def register(kind: str, fields: Sequence[str], parse) -> None:
    """Add an attribute kind (``#ttg.<kind>``) read by ``parse(fields) -> TritonLayout``."""
    _FIELDS[kind] = list(fields)
    _PARSERS[kind] = parse


def from_attribute(attr: Attribute) -> TritonLayout:
    """A parsed :class:`Attribute` -> the typed layout, with field checks."""
    dialect, _, kind = attr.kind.partition(".")
    if dialect != "ttg" or kind not in _FIELDS:
        raise InputError(
            "triton", "attribute", f"kind must be one of #ttg.{', #ttg.'.join(_FIELDS)}", "#" + attr.kind
        )
    f = _Fields(kind, attr.params, _FIELDS[kind])
    if attr.trailing and kind != "shared_linear":
        raise InputError(kind, ", ".join(attr.trailing), "is not a field of " + kind)
    if attr.intervals and kind != "padded_shared":
        raise InputError(kind, "intervals", "only padded_shared takes [interval:+pad] lists")
    if kind in ("dot_op", "slice"):
        p = f.get("parent")
        if not isinstance(p, Attribute):
            raise InputError(kind, "parent", "must be a layout attribute", _fmt(p))
        parent = from_attribute(p)
        return DotOperand.parse(f, parent) if kind == "dot_op" else Slice.parse(f, parent)
    if kind == "shared_linear":
        return SharedLinear.parse(f, attr.trailing)
    if kind == "padded_shared":
        return PaddedShared.parse(f, attr.intervals)
    if kind in _PARSERS:
        return _PARSERS[kind](f)
    return {
        "blocked": Blocked.parse,
        "linear": Linear.parse,
        "nvidia_mma": NvidiaMma.parse,
        "swizzled_shared": SwizzledShared.parse,
        "nvmma_shared": NVMMAShared.parse,
    }[kind](f)


def parse_triton(text: str, aliases: Mapping[str, str] | None = None) -> TritonLayout:
    """Parse Triton attribute text (``#alias = ...`` lines allowed before it)."""
    return from_attribute(parse_attribute(text, aliases))


# ----- printing any linear layout in Triton notation --------------------------------------------
def linear_text(layout: LinearLayout) -> str:
    """A distributed :class:`LinearLayout` as ``#ttg.linear<...>``."""
    b = layout.as_dict()
    return Linear(*(_t(b.get(d, [])) for d in ("register", "lane", "warp", "block"))).text()


def shared_alignment(attr: object) -> int:
    """The byte alignment Triton 3.9.0 requires of a shared buffer with this attribute
    (``getAlignment``): 16 for ``swizzled_shared``; ``128 * maxPhase`` for ``nvmma_shared``
    (1024 for a 128-byte swizzle: TMA and wgmma rely on it); a ``shared_linear``'s own.

    >>> shared_alignment(parse_triton("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...                               "elementBitWidth = 16}>"))
    1024
    """
    if isinstance(attr, NVMMAShared):
        return 128 * (attr.swizzle // 16 if attr.swizzle else 1)
    if isinstance(attr, SharedLinear):
        return attr.alignment
    return 16


def shared_linear_text(layout: LinearLayout, alignment: int = 16) -> str:
    """A memory :class:`LinearLayout` as ``#ttg.shared_linear<...>``."""
    b = layout.as_dict()
    return SharedLinear(_t(b.get("offset", [])), _t(b.get("block", [])), alignment).text()


def _t(bases: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(b) for b in bases)


def _prod(xs: Sequence[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _row_bases_match(want, order, shape, vec: int, per_phase: int, max_phase: int) -> bool:
    """A quick necessary condition (2-D): row 0 is unswizzled, and row ``2^j`` starts at column
    ``vec * ((2^j // perPhase) % maxPhase)``."""
    if len(shape) != 2:
        return True
    c, r = order[0], order[1]
    cbits = log2(shape[c])
    if len(want) < cbits + log2(shape[r]):
        return False
    for j in range(log2(shape[r])):
        b = want[cbits + j]
        if b[r] != 1 << j or b[c] != vec * (((1 << j) // per_phase) % max_phase):
            return False
    return all(want[i][c] == 1 << i and want[i][r] == 0 for i in range(cbits))


def swizzled_shared_for(layout: LinearLayout) -> SwizzledShared | None:
    """The ``#ttg.swizzled_shared`` attribute with exactly this memory layout (one CTA), or None.
    Searches orders and power-of-two (vec, perPhase, maxPhase), smallest first.

    >>> L = parse_triton("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>")
    >>> swizzled_shared_for(L.to_layout([16, 32]).with_in_bases("block", [])).text()
    '#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>'
    """
    from itertools import permutations

    shape = [s for _, s in layout.out_dims]
    rank = len(shape)
    if [n for n, _ in layout.out_dims] != tl.dims(rank) or layout.in_bases("block"):
        return None
    want = layout.in_bases("offset")
    for order in permutations(range(rank)):
        cols = shape[order[0]]
        rows = shape[order[1]] if rank > 1 else 1
        for max_phase in (1 << i for i in range(log2(cols) + 1)):
            for vec in (1 << i for i in range(log2(cols) + 1)):
                if max_phase > 1 and vec * max_phase > cols:
                    continue
                for per_phase in (1 << i for i in range(log2(max(rows, 1)) + 1)):
                    if not _row_bases_match(want, order, shape, vec, per_phase, max_phase):
                        continue
                    cand = SwizzledShared(vec, per_phase, max_phase, tuple(order))
                    if cand.to_layout(shape).in_bases("offset") == want:
                        return cand
                    if max_phase == 1:
                        break
                if max_phase == 1:
                    break
    return None
