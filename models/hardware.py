"""Shared-memory hardware facts, in one place: 32 banks of 4 bytes (sm80, sm90, sm100).

>>> bank(36 * 4), BANKS, BANK_BYTES
(4, 32, 4)
"""

from __future__ import annotations

import numpy as np

BANKS = 32
BANK_BYTES = 4


def bank(byte_addr: int | np.ndarray) -> int | np.ndarray:
    """Bank serving a byte address: ``(addr // 4) % 32``."""
    return (byte_addr // BANK_BYTES) % BANKS
