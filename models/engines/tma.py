"""The swizzle modes of the Hopper/Blackwell engines (TMA's tensor-map swizzle, the wgmma and
tcgen05 shared-memory descriptors' layout type) as XORs on the shared byte address.

A mode with span ``S`` bytes (32, 64, 128) and ``B`` swizzled bits (1, 2, 3) flips address bits
``[4, 4 + B)`` (16-byte chunk within the span) with bits ``[7, 7 + B)`` (the 128-byte row): CuTe's
``Swizzle<B, 4, 3>`` on byte addresses, period ``128 << B`` bytes (PTX ISA, "Tensor swizzling
modes"; CUTLASS ``GMMA::Layout_*_SW*_Atom``). Blackwell's 128-byte mode with 32-byte atoms flips
bits ``[5, 7)`` with ``[7, 9)`` (``Swizzle<2, 5, 2>``, period 512 B). The hardware applies the XOR
to the absolute shared address, so a tile whose base is off the period reads with another phase.
The bits each mode moves: :data:`bankproof.models.swizzle.SWIZZLE_DIAGRAM`.

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
from bankproof.models.notation.cute_values import Swizzle


@dataclass(frozen=True)
class Mode:
    """A swizzle on byte addresses (CuTe's ``Swizzle<B,M,S>``, :class:`~bankproof.models.notation.
    cute_values.Swizzle`); ``span`` is the swizzled row's bytes."""

    name: str
    sw: Swizzle
    span: int

    @property
    def period(self) -> int:
        """Bytes after which the pattern repeats (1 for no swizzle)."""
        return 1 << self.sw.top_bit if self.sw.b else 1

    @property
    def cute(self) -> str:
        return self.sw.text()


MODES = {
    "none": Mode("none", Swizzle(0, 4, 3), 16),
    "32B": Mode("32B", Swizzle(1, 4, 3), 32),
    "64B": Mode("64B", Swizzle(2, 4, 3), 64),
    "128B": Mode("128B", Swizzle(3, 4, 3), 128),
    "128B_atom32": Mode("128B_atom32", Swizzle(2, 5, 2), 128),  # sm100, published, not measured
    "128B_atom64": Mode("128B_atom64", Swizzle(1, 6, 1), 128),  # sm100 (PTX table), published, not measured
}
MEASURED = ("none", "32B", "64B", "128B")  # on an H100 and an H200; the others are read from the PTX ISA


def arch_modes(arch: str) -> tuple[str, ...]:
    """The swizzle modes a TMA box or a descriptor may use on ``arch`` (sm100 adds Blackwell's).

    >>> arch_modes("sm90")
    ('none', '32B', '64B', '128B')
    """
    return ("none", "32B", "64B", "128B") + (("128B_atom32", "128B_atom64") if arch == "sm100" else ())


def mode(name: str) -> Mode:
    """A mode by name (``none``, ``32B``, ``64B``, ``128B``; Blackwell's ``128B_atom32`` and
    ``128B_atom64``). TMA's ``128B_ATOM_32B_FLIP_8B`` has prose and no table in the PTX ISA: not
    modelled."""
    if name not in MODES:
        raise InputError("swizzle", "mode", f"must be one of {', '.join(MODES)}", name)
    return MODES[name]


class NumpyOps:
    """The operations address functions use beyond ``+ * ^ &``, for numpy arrays and ints."""

    @staticmethod
    def shr(x, n: int):
        return x >> n


NUMPY = NumpyOps()


def swizzled(sw: Swizzle, x, ops=NUMPY):
    """CuTe's ``Swizzle<B,M,S>`` on ``x`` with ``ops``."""
    y = x & sw.mask
    return x ^ (ops.shr(y, sw.s) if sw.s >= 0 else y * (1 << -sw.s))


def phased(mode: Mode, x, base_offset: int, ops=NUMPY):
    """The mode's XOR with its row phase (address bits from ``top - B``) lowered by
    ``base_offset`` modulo the mode's rows: how a wgmma descriptor reads. Measured on an H100 and an
    H200 (``gpu_checks/results/h100-2026-11-27-engines.json.gz``): every layout type, 8/16/32-bit,
    K/MN-major, A and B; base offset 0 reads the absolute-address swizzle (a TMA tile's) at any
    start; a nonzero field shifts the phase by its value (not by the start's), the 32B mode too.

    >>> [int(phased(MODES["128B"], 128 + 16, b)) for b in (0, 1)]
    [128, 144]
    """
    sw = mode.sw
    if not base_offset or not sw.b:
        return swizzled(sw, x, ops)
    phase = (ops.shr(x, sw.top_bit - sw.b) - base_offset) & ((1 << sw.b) - 1)
    return x ^ (phase * (1 << sw.m))


def swizzle(m: Mode, address: int | np.ndarray) -> int | np.ndarray:
    """The byte address ``m`` maps ``address`` to (an involution: applying it twice gives back
    the address)."""
    return m.sw.apply(address)


def box_check(m: Mode, inner_bytes: int) -> None:
    """TMA refuses a box whose inner dimension is wider than the swizzle span (PTX/CUDA: "the
    inner dimension of the box must be less than or equal to the swizzle size")."""
    if m.sw.b and inner_bytes > m.span:
        why = (
            f"exceeds the {m.name} swizzle span ({m.span} bytes): the inner box dimension must be <= the "
            "swizzle size"
        )
        raise InputError("tma", "box inner dimension", why, f"{inner_bytes} bytes")
