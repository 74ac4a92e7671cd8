"""On the device: a ``torch.compile``d model (:mod:`lab.gpu.inductor_model`) run under
``bankproof.capture(DIR)``, so Inductor's own kernels are captured with their launches; run under
Nsight Compute limited to the NVTX range ``measure`` (the second call), its counters judge
``triton replay``'s launch totals of the capture.

    ncu --nvtx --nvtx-include measure/ --metrics ... python3 -m lab.gpu.capture_inductor OUT/capture
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bankproof


def main(folder: str) -> None:
    import torch
    import triton

    from lab.gpu.inductor_model import run

    with bankproof.capture(folder) as cap:
        head = run()
    report = {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "head": head,
        "compiles": sorted(c["name"] for c in cap.compiles.values()),
        "launches": [(cap.compiles[la["compile"]]["name"], la["grid"]) for la in cap.launches],
        "errors": cap.errors,
    }
    (Path(folder) / "probe.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
