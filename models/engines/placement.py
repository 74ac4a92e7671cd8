"""Placements: where each element of a 2-D tile lives in shared memory, as the absolute byte address
of tile coordinate ``(row, col)`` when the tile starts at shared address ``base``. Three kinds: a TMA
box written with a swizzle mode (:class:`TmaBox`), an operand read through a wgmma/tcgen05 descriptor
(:class:`DescriptorRead`), and a layout whose XOR software computes from the absolute address or from
the offset in the buffer (:class:`LayoutPlacement`). Each address function is written once over
``ops`` so the same code evaluates numpy arrays (enumeration) and Z3 bit-vectors (proofs): only
``+ * ^ &``, shifts left, and ``ops.shr`` (logical shift right) are used.

Tile coordinates are the writer's: ``row`` the box's outer dimension, ``col`` its contiguous one. A
K-major operand has ``(row, col) = (mn, k)``; an MN-major one ``(k, mn)``.

>>> box = TmaBox(MODES["128B"], 8, 64, 16)
>>> [int(box.address(1, c, 1024 + 128)) for c in (0, 8)]  # row 1 at a base one row off the period
[1312, 1328]
>>> d = DescriptorRead(Descriptor("sm90", 0, 16, 1024, 0, MODES["128B"]), "K", 16, 8)
>>> [int(d.address(1, c, 1024 + 128)) for c in (0, 8)]  # base offset 0: the same bytes
[1312, 1328]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from bankproof.models.engines.descriptors import Descriptor, read_address
from bankproof.models.engines.tma import MODES, NUMPY, Mode, box_check, swizzled
from bankproof.models.errors import InputError
from bankproof.models.notation.cute_values import Swizzle


@dataclass(frozen=True)
class TmaBox:
    """A 2-D TMA box of ``rows x cols`` elements written with swizzle ``mode`` (measured on an H100
    and an H200: each box row starts a new swizzle-span row even when the box is narrower than the
    span; the XOR is on the absolute address; the destination must be 128-byte aligned)."""

    mode: Mode
    rows: int
    cols: int
    elem_bits: int
    panels: int = 1  # boxes side by side along the inner dimension, each after the last in memory
    kind: str = field(default="tma", init=False)

    def __post_init__(self) -> None:
        eb = self.elem_bits // 8
        if self.elem_bits not in (8, 16, 32, 64):
            raise InputError("tma", "dtype", "must be 8, 16, 32 or 64 bits wide", self.elem_bits)
        for name, v in (("rows", self.rows), ("columns", self.cols)):
            if not 1 <= v <= 256:
                raise InputError("tma", f"box {name}", "must be 1 to 256 (boxDim limit)", v)
        if (self.cols * eb) % 16:
            raise InputError(
                "tma", "box inner dimension", "must be a multiple of 16 bytes", f"{self.cols * eb} bytes"
            )
        if self.panels != 1 and (self.panels < 1 or self.cols & (self.cols - 1)):
            raise InputError("tma", "panels", "need a power-of-two box width", f"{self.panels} x {self.cols}")
        box_check(self.mode, self.cols * eb)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols * self.panels)

    @property
    def origin(self) -> tuple[int, int]:
        return (0, 0)

    @property
    def pitch(self) -> int:
        """Bytes from one box row to the next in shared memory."""
        inner = self.cols * self.elem_bits // 8
        return max(inner, self.mode.span) if self.mode.sw.b else inner

    @property
    def alignment(self) -> int:
        return TMA_ALIGN

    def address(self, row, col, base, ops=NUMPY):
        eb = self.elem_bits // 8
        if self.panels == 1:
            return swizzled(self.mode.sw, base + row * self.pitch + col * eb, ops)
        lc = self.cols.bit_length() - 1
        panel, inner = ops.shr(col, lc), col & (self.cols - 1)
        return swizzled(
            self.mode.sw, base + panel * (self.rows * self.pitch) + row * self.pitch + inner * eb, ops
        )

    def text(self) -> str:
        more = f" x {self.panels} along the inner dimension" if self.panels > 1 else ""
        return f"TMA {self.mode.name} box {self.rows}x{self.cols}{more} ({self.elem_bits}-bit)"

    def cute(self) -> str:
        """CuTe's form: the mode's byte swizzle over a swizzled smem pointer (on the absolute
        address) of the row-major box."""
        pe = self.pitch * 8 // self.elem_bits
        return f"{self.mode.cute} o smem_ptr[{self.elem_bits}b] o ({self.rows},{self.cols}):({pe},1)"


SM90_MN_BITS = (16,)
TMA_ALIGN = 128  # measured: a cp.async.bulk.tensor to a 16- or 64-byte aligned address faults


@dataclass(frozen=True)
class DescriptorRead:
    """The elements one or more K steps of a wgmma (sm90) or tcgen05 (sm100) operand read through
    descriptor ``desc``, whose start is taken relative to the tile's base: ``mn`` rows of M or N;
    step ``s`` starts ``s * step_bytes`` after the descriptor's start (default: 32 bytes K-major,
    MN-major the next 32 bytes of K: ``256 / bits`` rows, a K-group stride per 8 rows)."""

    desc: Descriptor
    major: str
    elem_bits: int
    mn: int
    k_steps: int = 1
    step_bytes: int = 0
    k_origin: int = 0
    kind: str = field(default="descriptor", init=False)

    def __post_init__(self) -> None:
        if self.major not in ("K", "MN"):
            raise InputError("descriptor", "major", "must be K or MN", self.major)
        if self.elem_bits not in (8, 16, 32) or self.mn % 8 or not 8 <= self.mn <= 256:
            why = "needs 8/16/32-bit elements and 8 to 256 rows, a multiple of 8"
            raise InputError("descriptor", "tile", why,
                             f"{self.elem_bits}-bit x {self.mn} rows")  # fmt: skip
        if not 1 <= self.k_steps <= 64:
            raise InputError("descriptor", "k_steps", "must be 1 to 64", self.k_steps)
        if self.step_bytes % 16:  # a descriptor's start address is in 16-byte units (bits 0-13 of addr >> 4)
            why = "must be a multiple of 16 bytes: a K step moves the descriptor's start (in 16-byte units)"
            raise InputError("descriptor", "step_bytes", why, self.step_bytes)
        check_major(self.desc, self.major, self.elem_bits)
        lbo_read = not (self.major == "K" and self.desc.swizzle.sw.b)  # K-major swizzled: LBO is never read
        if self.desc.lbo_mode and lbo_read:
            why = "1 (LBO as an absolute address, sm_103a) is not modelled: give a relative LBO"
            raise InputError("descriptor", "lbo_mode", why, self.desc.lbo_mode)

    @property
    def k(self) -> int:
        """K elements of one step (32 bytes)."""
        return 256 // self.elem_bits

    @property
    def step(self) -> int:
        if self.step_bytes:
            return self.step_bytes
        if self.major == "K":
            return 32
        group = self.desc.sbo if self.desc.swizzle.sw.b else self.desc.lbo  # bytes between 8-row K groups
        return group * self.k // 8

    @property
    def shape(self) -> tuple[int, int]:
        ks = self.k * self.k_steps
        return (self.mn, ks) if self.major == "K" else (ks, self.mn)

    @property
    def origin(self) -> tuple[int, int]:
        return (0, self.k_origin) if self.major == "K" else (self.k_origin, 0)

    @property
    def alignment(self) -> int:
        return 16

    def address(self, row, col, base, ops=NUMPY):
        mn, kk = (row, col) if self.major == "K" else (col, row)
        kk = kk - self.k_origin
        lk = self.k.bit_length() - 1
        step, k = ops.shr(kk, lk), kk & (self.k - 1)
        start = base + self.desc.start + step * self.step
        return read_address(self.desc, self.major, self.elem_bits, mn, k, start, ops)

    def text(self) -> str:
        d = self.desc
        what = f"{d.arch} descriptor {d.swizzle.name} {self.major}-major {self.elem_bits}-bit"
        return (f"{what}, {self.mn} rows, "
                f"start base+{d.start}, LBO {d.lbo}, SBO {d.sbo}, base offset {d.base_offset}, "
                f"{self.k_steps} K step(s) of {self.step} bytes")  # fmt: skip


def check_major(d: Descriptor, major: str, elem_bits: int) -> None:
    """PTX's rules on which operands may be MN-major: wgmma (sm90) transposes only 16-bit operands;
    tcgen05 (sm100) takes MN-major 32-bit operands only with the 128B-with-32-byte-atoms swizzle
    (CUTLASS's sm100 builder), and MN-major 8/16-bit operands with any swizzle but that one."""
    if d.swizzle.name == "128B_atom32":
        why = (
            "is not modelled for descriptor reads: its canonical layout "
            "(CUTLASS Layout_MN_SW128_32B_Atom, "
            "4-row K groups) has neither a PTX table nor a measurement here"
        )
        what = f"{major}-major {elem_bits}-bit"
        raise InputError("descriptor", "swizzle 128B with 32-byte atoms", why, what)
    if major != "MN":
        if d.swizzle.name == "128B_atom32":
            why = "is for MN-major 32-bit operands only (PTX: tcgen05 shared memory descriptor)"
            raise InputError("descriptor", "swizzle 128B with 32-byte atoms", why, "K-major")
        return
    if d.arch == "sm90" and elem_bits not in SM90_MN_BITS:
        why = "MN-major needs 16-bit elements on sm90 (PTX: wgmma imm-trans is only valid for .f16/.bf16)"
        raise InputError("descriptor", "major", why, f"MN with {elem_bits}-bit")
    if d.arch == "sm100" and elem_bits == 32 and d.swizzle.name != "128B_atom32":
        why = (
            "MN-major 32-bit operands need the 128B swizzle with 32-byte atoms (CUTLASS's sm100 builder: "
            '"for mn-major tf32 operands, SW128_32B is the only available smem layout")'
        )
        raise InputError("descriptor", "swizzle", why, f"{d.swizzle.name} with {elem_bits}-bit MN-major")
    if d.arch == "sm100" and elem_bits != 32 and d.swizzle.name == "128B_atom32":
        why = "128B with 32-byte atoms is for MN-major 32-bit operands (PTX: tcgen05 shared memory desc.)"
        raise InputError("descriptor", "swizzle", why, f"{elem_bits}-bit MN-major")


@dataclass(frozen=True)
class LayoutPlacement:
    """A tile placed by software: ``offsets[row, col]`` (elements, from a memory layout), then an
    optional byte swizzle computed from the absolute address (``xor = "absolute"``) or from the
    byte offset in the buffer (``"relative"``)."""

    offsets: np.ndarray = field(compare=False)
    elem_bits: int
    swizzle: Swizzle | None = None
    xor: str = "relative"
    label: str = "layout"
    kind: str = field(default="layout", init=False)

    def __post_init__(self) -> None:
        if self.xor not in ("relative", "absolute"):
            raise InputError("layout", "xor", "must be absolute or relative", self.xor)
        if self.offsets.ndim != 2:
            raise InputError("layout", "shape", "must be 2-D", self.offsets.shape)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(int(s) for s in self.offsets.shape)  # type: ignore[return-value]

    @property
    def origin(self) -> tuple[int, int]:
        return (0, 0)

    @property
    def alignment(self) -> int:
        return max(1, self.elem_bits // 8)

    def linear_bases(self) -> tuple[list[int], list[int]] | None:
        """Images of each row bit and column bit when the offsets are XOR-linear in the coordinate
        bits (power-of-two sides): what the Z3 engine needs; ``None`` otherwise."""
        r, c = self.shape
        if r & (r - 1) or c & (c - 1):
            return None
        rb = [int(self.offsets[1 << i, 0]) for i in range(r.bit_length() - 1)]
        cb = [int(self.offsets[0, 1 << i]) for i in range(c.bit_length() - 1)]
        rows, cols = np.meshgrid(np.arange(r), np.arange(c), indexing="ij")
        acc = np.zeros_like(self.offsets)
        for i, v in enumerate(rb):
            acc ^= ((rows >> i) & 1) * v
        for i, v in enumerate(cb):
            acc ^= ((cols >> i) & 1) * v
        return (rb, cb) if (acc == self.offsets).all() else None

    def element_offset(self, row, col, ops=NUMPY):
        if ops is NUMPY:
            return self.offsets[row, col]
        bases = self.linear_bases()
        if bases is None:
            raise InputError(
                "layout", "offsets", "are not linear in the coordinate bits (the Z3 engine needs it)"
            )
        out = 0
        for i, v in enumerate(bases[0]):
            out = out ^ (ops.shr(row, i) & 1) * v
        for i, v in enumerate(bases[1]):
            out = out ^ (ops.shr(col, i) & 1) * v
        return out

    def address(self, row, col, base, ops=NUMPY):
        byte = self.element_offset(row, col, ops) * (self.elem_bits // 8)
        if self.swizzle is None:
            return base + byte
        if self.xor == "relative":
            return base + swizzled(self.swizzle, byte, ops)
        return swizzled(self.swizzle, base + byte, ops)

    def text(self) -> str:
        sw = f", {self.swizzle.text()} on the {self.xor} byte address" if self.swizzle else ""
        return f"{self.label} ({self.elem_bits}-bit{sw})"


Placement = TmaBox | DescriptorRead | LayoutPlacement


def period(*places: Placement) -> int:
    """A ``P`` (a power of two) with ``f(base + P) = f(base) + P`` for every placement: the
    addresses' dependence on the base repeats every ``P`` bytes (every swizzle reads only address
    bits below its top bit)."""
    top = 10
    for p in places:
        sw = (
            p.mode.sw
            if isinstance(p, TmaBox)
            else p.desc.swizzle.sw
            if isinstance(p, DescriptorRead)
            else p.swizzle
        )
        if sw is not None:
            top = max(top, sw.top_bit)
    return 1 << top


__all__ = ["MODES", "DescriptorRead", "LayoutPlacement", "Placement", "TmaBox", "period", "read_address"]
