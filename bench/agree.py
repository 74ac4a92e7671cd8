"""Agreement speed (bankproof agree): a 128x128 f16 tile (TMA 128B boxes, two panels) against a
software reader with a buffer-relative XOR, at a base off the period.

Targets: the Z3 proof at one base in <= 100 ms, the whole command (both engines, the agreeing
offsets over one period, the alignment re-proved by Z3 over every base) in <= 500 ms. Baseline in the
same process: the enumeration engine at one base.
"""

from __future__ import annotations

import numpy as np
from bankproof.models.engines.agreement import check
from bankproof.models.engines.canonical import tma_tile
from bankproof.models.engines.placement import LayoutPlacement
from bankproof.models.engines.tma import MODES
from bankproof.proofs.agreement import prove
from bankproof.verifier.api.agree import agree
from z3_proofs import timed  # bench/ is this script's folder: one timing helper for the benches

WRITER = {"tma": "128B", "box": [128, 64], "panels": 2}
READER = {"layout": "(128,(64,2)):(64,(1,8192))", "swizzle": "Sw<3,4,3>", "xor": "relative"}


def main() -> None:
    box = tma_tile("128B", 16, "K", 128, 128)
    r, c = np.meshgrid(np.arange(128), np.arange(128), indexing="ij")
    soft = LayoutPlacement((c // 64) * 8192 + r * 64 + c % 64, 16, MODES["128B"].sw, "relative")
    enum_ms, e = timed(lambda: check(box, soft, 1024 + 128))
    z3_ms, z = timed(lambda: prove(box, soft, base=1024 + 128))
    all_ms, res = timed(lambda: agree(WRITER, READER, dtype="f16", base=1024 + 128), reps=3)
    assert not e.agree and z.status == "refuted"
    assert res.verdict == "refuted" and res.smallest_alignment == 1024
    print(f"128x128 f16, TMA 128B vs relative XOR at base 1152: enumeration {enum_ms:.1f} ms (baseline), "
          f"z3 {z3_ms:.0f} ms, whole command {all_ms:.0f} ms")  # fmt: skip
    print(f"z3 proof {z3_ms:.0f} ms (target <= 100): {'PASS' if z3_ms <= 100 else 'FAIL'}")
    print(f"whole command {all_ms:.0f} ms (target <= 500): {'PASS' if all_ms <= 500 else 'FAIL'}")


if __name__ == "__main__":
    main()
