"""What one shared-memory atomic warp instruction costs in wavefronts, as measured: integer 32-bit
``atom.shared`` (SASS ``ATOMS.ADD``/``.EXCH``/``.MAX``, one instruction each) serializes every lane
that touches a bank, with no broadcast: the count is the largest number of active lanes on one
bank, whether they share an address or not (H100,
``gpu_checks/results/h100-2026-12-07-cp-async-cross.json.gz``: 7 patterns each of add, exch and
max: one address 32, two addresses on two banks 16, one bank 32, four lanes a bank 4, distinct
banks 1, pairs on one word 2, half a warp on distinct banks 1; fitted on add, the same on exch and
max). Not measured, hence not counted: 64-bit and float atomics (``atom.shared.add.f32`` runs as a
compare-and-swap loop on sm90), ``cas``, reductions (``red``) and other widths.

>>> atomic_wavefronts([0] * 32), atomic_wavefronts([4 * i for i in range(32)])
(32, 1)
>>> pairs, four_on = [4 * (i // 2) for i in range(32)], [True] * 4 + [False] * 28
>>> atomic_wavefronts(pairs), atomic_wavefronts([0] * 32, four_on)
(2, 4)
"""

from __future__ import annotations

import numpy as np
from bankproof.models.instructions import BANKS

# The measured forms, as PTX writes them (the probe's) and as the SASS runs them (ptxas 13.0.88 for
# sm_90: atom.shared.add.u32 and red.shared.add.u32 -> ATOMS.ADD, exch.b32 -> ATOMS.EXCH, max.u32 ->
# ATOMS.MAX; add.s32 and max.s32 run as ATOMS.ADD.S32 / ATOMS.MAX.S32, not measured).
PTX_FORMS = {"add.u32": "ATOMS.ADD", "exch.b32": "ATOMS.EXCH", "max.u32": "ATOMS.MAX"}
INSTRS = tuple(f"atom.{f}" for f in PTX_FORMS)  # the names ``bankproof wavefronts`` takes
MEASURED_ON = frozenset({"sm90"})  # the archs whose GPUs ran the probe (an H100)


def status(arch: str) -> str:
    """What a count by this rule rests on for ``arch``: ``measured`` where the probe ran.

    >>> status("sm90"), status("sm80")
    ('measured', 'assumed')
    """
    return "measured" if arch in MEASURED_ON else "assumed"


def form(opcode: str) -> str | None:
    """The counted name (``atom.add.u32``) of a shared atomic or reduction whose SASS may be a
    measured form, else ``None``; whether it is, the SASS decides (an ``atom.add.u32`` of a constant
    whose result is unused runs as ATOMS.POPC.INC, measured as a form of its own:
    :func:`increment_wavefronts`).

    >>> form("atom.shared.add.u32"), form("red.shared::cta.add.u32"), form("atom.shared.add.s32")
    ('atom.add.u32', 'red.add.u32', None)
    """
    parts = opcode.split(".")
    if len(parts) != 4 or parts[0] not in ("atom", "red") or parts[1] not in ("shared", "shared::cta"):
        return None
    op = ".".join(parts[2:])
    if op not in PTX_FORMS or (parts[0] == "red" and op != "add.u32"):
        return None
    return f"{parts[0]}.{op}"


def atomic_wavefronts(byte_offsets, active=None) -> int:
    """Wavefronts of one 32-bit integer shared atomic: the most active lanes on one bank."""
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if not act.any():
        return 0
    banks = (offs[act] // 4) % BANKS
    return int(np.bincount(banks, minlength=BANKS).max())


def groups(byte_offsets, active=None) -> tuple[list[int], ...]:
    """The lanes each wavefront serves: the k-th serves the k-th active lane of every bank (so
    there are :func:`atomic_wavefronts` of them).

    >>> groups([0, 4, 0, 8])
    ([0, 1, 3], [2])
    """
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    banks = ((offs // 4) % BANKS).tolist()
    rank: dict[int, int] = {}
    out: list[list[int]] = []
    for lane in np.flatnonzero(act).tolist():
        k = rank[banks[lane]] = rank.get(banks[lane], -1) + 1
        if k == len(out):
            out.append([])
        out[k].append(lane)
    return tuple(out)


def pair(byte_offsets, active=None) -> tuple[int, int] | None:
    """The lowest two active lanes on the most loaded bank (the first such bank by lane), else
    ``None`` where no bank serves two.

    >>> pair([0, 4, 128, 8] + [4 * i for i in range(4, 32)]), pair([4 * i for i in range(32)])
    ((0, 2), None)
    """
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    lanes, banks = np.flatnonzero(act), (offs // 4) % BANKS
    counts = np.bincount(banks[lanes], minlength=BANKS)
    if counts.max(initial=0) < 2:
        return None
    first = next(lane for lane in lanes if counts[banks[lane]] == counts.max())
    same = lanes[banks[lanes] == banks[first]]
    return int(same[0]), int(same[1])


# ``atom.shared.add.u32 _, [a], 1`` whose result is unused: ptxas 13.0.88 runs it as a warp's
# ATOMS.POPC.INC.32 (one increment per distinct word). Measured on an H100
# (gpu_checks/results/h100-2026-12-07-atom-inc.json.gz, lab/gpu/atom_inc.py, its SASS checked): the
# wavefronts are the most distinct words on one bank, as a 32-bit load's (one address 1, two words on
# two banks 1, 32 words on one bank 32, four a bank 4, pairs on one word 1, two words a bank 2, a
# half warp 1, five random patterns over 64 and 16 words 2, 2, 2, 1, 1).
INC_SASS = "ATOMS.POPC.INC.32"


def increment_wavefronts(byte_offsets, active=None) -> int:
    """Wavefronts of one ATOMS.POPC.INC: the most distinct active words on one bank.

    >>> increment_wavefronts([0] * 32), increment_wavefronts([128 * i for i in range(32)])
    (1, 32)
    """
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if not act.any():
        return 0
    words = np.unique(offs[act] // 4)
    return int(np.bincount(words % BANKS, minlength=BANKS).max())


def increment_pair(byte_offsets, active=None) -> tuple[int, int] | None:
    """Two active lanes whose distinct words share a bank (the first such, by lane), else ``None``.

    >>> increment_pair([0, 0, 128] + [4 * i for i in range(3, 32)])
    (0, 2)
    """
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    seen: dict[int, tuple[int, int]] = {}
    for lane in np.flatnonzero(act).tolist():
        word = int(offs[lane]) // 4
        b = word % BANKS
        if b in seen and seen[b][0] != word:
            return seen[b][1], lane
        seen.setdefault(b, (word, lane))
    return None
