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

BANKS = 32
MEASURED_OPS = frozenset({"add", "exch", "max"})  # 32-bit integer forms measured (ATOMS.<OP>)


def atomic_wavefronts(byte_offsets, active=None) -> int:
    """Wavefronts of one 32-bit integer shared atomic: the most active lanes on one bank."""
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(len(offs), dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if not act.any():
        return 0
    banks = (offs[act] // 4) % BANKS
    return int(np.bincount(banks, minlength=BANKS).max())
