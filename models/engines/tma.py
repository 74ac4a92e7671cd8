"""The swizzle modes of the Hopper/Blackwell engines (TMA's tensor-map swizzle, the wgmma and
tcgen05 shared-memory descriptors' layout type) as XORs on the shared byte address.

A mode with span ``S`` bytes (32, 64, 128) and ``B`` swizzled bits (1, 2, 3) flips address bits
``[4, 4 + B)`` (16-byte chunk within the span) with bits ``[7, 7 + B)`` (the 128-byte row): CuTe's
``Swizzle<B, 4, 3>`` on byte addresses, period ``128 << B`` bytes (PTX ISA, "Tensor swizzling
modes"; CUTLASS ``GMMA::Layout_*_SW*_Atom``). Blackwell's 128-byte mode with 32-byte atoms flips
bits ``[5, 7)`` with ``[7, 9)`` (``Swizzle<2, 5, 2>``, period 512 B). The hardware applies the XOR
to the absolute shared address, so a tile whose base is off the period reads with another phase.

>>> m = MODES["128B"]
>>> [swizzle(m, a) for a in (0, 16, 128, 128 + 16, 1024 + 128)]
[0, 16, 144, 128, 1168]
>>> m.cute, m.period
('Sw<3,4,3>', 1024)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.errors import InputError


@dataclass(frozen=True)
class Mode:
    """A swizzle on byte addresses: ``bits`` address bits from ``base`` XORed with ``bits`` bits from
    ``base + shift`` (CuTe ``Swizzle<bits, base, shift>``); ``span`` is the swizzled row's bytes."""

    name: str
    bits: int
    base: int
    shift: int
    span: int
    arch: str  # the first architecture with it

    @property
    def period(self) -> int:
        """Bytes after which the pattern repeats (1 for no swizzle)."""
        return 1 << (self.base + self.shift + self.bits) if self.bits else 1

    @property
    def cute(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def phase(self, base_address: int) -> int:
        """The pattern's phase at a base address: which row of the period it starts on (PTX's
        matrix base offset, ``(addr >> 7) & 7`` for the 128-byte mode)."""
        if not self.bits:
            return 0
        return (base_address >> (self.base + self.shift)) & ((1 << self.bits) - 1)


MODES = {
    "none": Mode("none", 0, 4, 3, 16, "sm90"),
    "32B": Mode("32B", 1, 4, 3, 32, "sm90"),
    "64B": Mode("64B", 2, 4, 3, 64, "sm90"),
    "128B": Mode("128B", 3, 4, 3, 128, "sm90"),
    "128B_atom32": Mode("128B_atom32", 2, 5, 2, 128, "sm100"),
}
TMA_CODES = {0: "none", 1: "32B", 2: "64B", 3: "128B"}  # CUtensorMapSwizzle's order (sm90)


def mode(name: str) -> Mode:
    """A mode by name (``none``, ``32B``, ``64B``, ``128B``, ``128B_atom32``)."""
    if name not in MODES:
        raise InputError("swizzle", "mode", f"must be one of {', '.join(MODES)}", name)
    return MODES[name]


def swizzle(m: Mode, address: int | np.ndarray) -> int | np.ndarray:
    """The byte address ``m`` maps ``address`` to (an involution: applying it twice gives back
    the address)."""
    if not m.bits:
        return address
    mask = ((1 << m.bits) - 1) << m.base
    return address ^ ((address >> m.shift) & mask)


def box_check(m: Mode, inner_bytes: int) -> None:
    """TMA refuses a box whose inner dimension is wider than the swizzle span (PTX/CUDA: "the
    inner dimension of the box must be less than or equal to the swizzle size")."""
    if m.bits and inner_bytes > m.span:
        why = (f"exceeds the {m.name} swizzle span ({m.span} bytes): the inner box dimension must be <= the "
               "swizzle size")
        raise InputError("tma", "box inner dimension", why, f"{inner_bytes} bytes")
