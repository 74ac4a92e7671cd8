"""The 64-bit shared-memory matrix descriptors of ``wgmma`` (sm90) and ``tcgen05.mma`` (sm100):
decode, encode, and the byte address of every element of the operand tile a descriptor reads.

sm90 (PTX ISA "Matrix Descriptor Format"; CUTLASS ``GmmaDescriptor``): start address, leading and
stride byte offsets as ``(x & 0x3FFFF) >> 4`` at bits 0-13, 16-29, 32-45; matrix base offset at
bits 49-51; layout type at bits 62-63 (0 none/interleave, 1 128B, 2 64B, 3 32B). sm100 (PTX ISA
"Shared memory descriptor" of ``tcgen05``; CUTLASS ``SmemDescriptor``): the same three fields, a
fixed ``0b001`` at bits 46-48, base offset 49-51, leading-dimension stride mode bit 52, swizzle at
bits 61-63 (0 none, 1 128B with 32-byte atoms, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid).

The canonical layouts (CUTLASS ``make_gmma_desc``, in 16-byte units, ``W`` = 1/2/4/8 for
none/32B/64B/128B): K-major ``((8,m),2):((W,SBO),LBO if W == 1 else 1)``; MN-major with a swizzle
``((W,m),(8,k)):((1,LBO),(W,SBO))``, without ``((1,m),(8,k)):((.,SBO),(1,LBO))``; the swizzle XOR
then applies to the address.

>>> d = decode(0x4000004000010040, "sm90")
>>> d.start, d.lbo, d.sbo, d.swizzle.name
(1024, 16, 1024, '128B')
>>> hex(encode(d))
'0x4000004000010040'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.engines.tma import MODES, NUMPY, Mode, phased
from bankproof.models.errors import InputError

SM90_SWIZZLE = {0: "none", 1: "128B", 2: "64B", 3: "32B"}
SM100_SWIZZLE = {0: "none", 1: "128B_atom32", 2: "128B", 4: "64B", 6: "32B"}
# (lowest bit, width) of the bits each format reserves (CUTLASS GmmaDescriptor / SmemDescriptor)
RESERVED = {"sm90": ((14, 2), (30, 2), (46, 3), (52, 10)), "sm100": ((14, 2), (30, 2))}
MAX_ROWS = 256  # M or N rows one descriptor read covers (wgmma and tcgen05 go to 256)


@dataclass(frozen=True)
class Descriptor:
    """A decoded descriptor: byte values (the 4 low bits the encoding drops are 0)."""

    arch: str
    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: Mode
    lbo_mode: int = 0  # sm100 bit 52: 0 relative offset, 1 absolute address
    # reserved bits that are set (PTX: must be 0; CUTLASS writes 0; decoded without them): said, not used
    reserved: tuple[str, ...] = ()

    def fields(self) -> dict:
        return {"arch": self.arch, "start_address": self.start, "leading_byte_offset": self.lbo,
                "stride_byte_offset": self.sbo, "base_offset": self.base_offset, "swizzle": self.swizzle.name,
                "swizzle_cute": self.swizzle.cute, "lbo_mode": self.lbo_mode}  # fmt: skip


def _field(v: int, lo: int, n: int) -> int:
    return (v >> lo) & ((1 << n) - 1)


def decode(value: int, arch: str) -> Descriptor:
    """The fields of a 64-bit descriptor; invalid codes are refused with the PTX rule."""
    if not 0 <= value < 1 << 64:
        raise InputError("descriptor", "value", "must be a 64-bit unsigned integer", value)
    start, lbo, sbo = (_field(value, lo, 14) << 4 for lo in (0, 16, 32))
    base = _field(value, 49, 3)
    if arch == "sm90" and _field(value, 46, 3) == 0b001 and _field(value, 61, 3) in (2, 4, 6):
        why = "are tcgen05's fixed 0b001 and bits 61-63 its swizzle code: an sm100 descriptor (--arch sm100)"
        raise InputError("descriptor", "bits 46-48", why, bin(_field(value, 46, 3)))
    reserved = tuple(f"bits {lo}-{lo + n - 1} = {bin(_field(value, lo, n))}"
                     for lo, n in RESERVED.get(arch, ()) if _field(value, lo, n))  # fmt: skip
    if arch == "sm90":
        mode = MODES[SM90_SWIZZLE[_field(value, 62, 2)]]
        return Descriptor(arch, start, lbo, sbo, base, mode, reserved=reserved)
    if arch != "sm100":
        raise InputError("descriptor", "arch", "must be sm90 (wgmma) or sm100 (tcgen05)", arch)
    if _field(value, 46, 3) != 0b001:
        raise InputError("descriptor", "bits 46-48", "must be the fixed constant 0b001 (PTX: tcgen05 shared "
                         "memory descriptor)", bin(_field(value, 46, 3)))  # fmt: skip
    if _field(value, 53, 8):
        why = "must be 0 (PTX: tcgen05 shared memory descriptor, fixed constant)"
        raise InputError("descriptor", "bits 53-60", why, bin(_field(value, 53, 8)))
    code = _field(value, 61, 3)
    if code not in SM100_SWIZZLE:
        why = (
            "must be 0 (none), 1 (128B with 32-byte atoms), 2 (128B), 4 (64B) or 6 (32B); 3, 5 and 7 "
            "are invalid (PTX: tcgen05 shared memory descriptor)"
        )
        raise InputError("descriptor", "swizzle", why, code)
    return Descriptor(arch, start, lbo, sbo, base, MODES[SM100_SWIZZLE[code]], _field(value, 52, 1), reserved)


def encode(d: Descriptor) -> int:
    """The 64-bit value of ``d`` (the inverse of :func:`decode` on valid values)."""
    offsets = (("start_address", d.start), ("leading_byte_offset", d.lbo), ("stride_byte_offset", d.sbo))
    for name, v in offsets:
        if v % 16 or not 0 <= v < 1 << 18:
            raise InputError("descriptor", name, "must be a multiple of 16 below 2^18", v)
    if not 0 <= d.base_offset < 8:
        raise InputError("descriptor", "base_offset", "must be 0 to 7", d.base_offset)
    out = (d.start >> 4) | (d.lbo >> 4) << 16 | (d.sbo >> 4) << 32 | d.base_offset << 49
    codes = SM90_SWIZZLE if d.arch == "sm90" else SM100_SWIZZLE
    code = next((c for c, n in codes.items() if n == d.swizzle.name), None)
    if code is None:
        raise InputError("descriptor", "swizzle", f"{d.swizzle.name} has no code on {d.arch}", d.swizzle.name)
    if d.arch == "sm90":
        return out | code << 62
    return out | 1 << 46 | d.lbo_mode << 52 | code << 61


def canonical(major: str, swizzle_name: str) -> str:
    """The canonical layout :func:`read_addresses` reads, in 16-byte units (CUTLASS
    ``make_gmma_desc``'s comments).

    >>> canonical("K", "128B"), canonical("MN", "none")
    ('((8,m),2):((8,SBO),1)', '((1,m),(8,k)):((.,SBO),(1,LBO))')
    """
    w = WIDTH[swizzle_name]
    if major == "K":
        return f"((8,m),2):(({w},SBO),{'LBO' if w == 1 else 1})"
    return "((1,m),(8,k)):((.,SBO),(1,LBO))" if w == 1 else f"(({w},m),(8,k)):((1,LBO),({w},SBO))"


def read_addresses(d: Descriptor, major: str, elem_bits: int, mn: int, k_bytes: int = 32) -> np.ndarray:
    """Byte address of each element ``(row, col)`` of the ``mn x (k_bytes * 8 / elem_bits)`` tile
    the descriptor reads (row: M or N, col: K), as an ``(mn, k)`` array (:func:`read_address` at
    the descriptor's own start).

    >>> d = decode(encode(Descriptor("sm90", 0, 16, 1024, 0, MODES["128B"])), "sm90")
    >>> read_addresses(d, "K", 16, 8)[1, :3].tolist()  # row 1, first 16-byte chunk flipped to chunk 1
    [144, 146, 148]
    """
    if isinstance(mn, bool) or not isinstance(mn, int) or not 8 <= mn <= MAX_ROWS or mn % 8:
        raise InputError(
            "descriptor", "rows", f"must be a multiple of 8 from 8 to {MAX_ROWS} (M or N of one MMA)", mn
        )
    if elem_bits not in (8, 16, 32) or mn % 8 or mn <= 0:
        why = "needs 8/16/32-bit elements and rows a multiple of 8"
        raise InputError("descriptor", "tile", why, f"{elem_bits}-bit x {mn} rows")
    if major not in ("K", "MN"):
        raise InputError("descriptor", "major", "must be K or MN", major)
    row, col = np.meshgrid(np.arange(mn), np.arange(k_bytes * 8 // elem_bits), indexing="ij")
    return read_address(d, major, elem_bits, row, col, d.start)


WIDTH = {"none": 1, "32B": 2, "64B": 4, "128B": 8, "128B_atom32": 8, "128B_atom64": 8}  # 16-byte units a row


def read_address(d: Descriptor, major: str, elem_bits: int, mn, k, start, ops=NUMPY):
    """Byte address a descriptor reads for element ``(mn, k)`` of one K step (CUTLASS
    ``make_gmma_desc``'s canonical layouts in 16-byte units, ``W`` units per swizzled row), the
    swizzle then applied on the absolute address with the base-offset phase rule."""
    w, t = WIDTH[d.swizzle.name], 128 // elem_bits
    lt = t.bit_length() - 1
    if major == "K":
        units = (
            (mn & 7) * w + ops.shr(mn, 3) * (d.sbo // 16) + ops.shr(k, lt) * (d.lbo // 16 if w == 1 else 1)
        )
        within = k & (t - 1)
    else:
        chunk = ops.shr(mn, lt)  # 16-byte unit along MN
        if w == 1:
            units = chunk * (d.sbo // 16) + (k & 7) + ops.shr(k, 3) * (d.lbo // 16)
        else:
            lw = w.bit_length() - 1
            units = (
                (chunk & (w - 1))
                + ops.shr(chunk, lw) * (d.lbo // 16)
                + (k & 7) * w
                + ops.shr(k, 3) * (d.sbo // 16)
            )
        within = mn & (t - 1)
    return phased(d.swizzle, start + units * 16 + within * (elem_bits // 8), d.base_offset, ops)
