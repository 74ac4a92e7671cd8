"""Pack the device run of lab/gpu/device_capture_inductor.sh into one record: per Triton kernel
launched inside the NVTX range ``measure`` (the compiled model's second call), its name, grid and
Nsight Compute's SASS-level shared-memory counters.

    python -m lab.gpu.pack_inductor_truth inductor-truth.csv capture/probe.json OUT.json
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from lab.gpu.kernel_truth import METRICS


def rows(text: str) -> list[dict]:
    """The kernel rows of ``ncu --csv --page raw`` output (its units row and log lines dropped)."""
    lines = [x for x in text.splitlines() if x.startswith('"')]
    return [r for r in csv.DictReader(io.StringIO("\n".join(lines))) if r.get("ID", "").isdigit()]


def pack(csv_path: str, probe_path: str, out: str, gpu: str = "") -> dict:
    probe = json.loads(Path(probe_path).read_text())
    kernels = [
        {
            "kernel": r["Kernel Name"],
            "grid_size": int(float(r["launch__grid_size"].replace(",", ""))),
            "block_size": int(float(r["launch__block_size"].replace(",", ""))),
            "metrics": {m: r[m] for m in METRICS if m in r},
        }
        for r in rows(Path(csv_path).read_text())
    ]
    record = {
        "gpu": gpu,
        "made_by": "lab/gpu/device_capture_inductor.sh (lab/gpu/capture_inductor.py, lab/gpu/inductor_model.py)",
        "what": "every kernel of a torch.compile'd Embedding-Linear-GELU-LayerNorm-softmax model's second call "
        f"(NVTX range measure), Triton {probe.get('triton')} and PyTorch {probe.get('torch')} on the device, "
        "captured by bankproof.capture into tests/data/capture_inductor_h100",
        "kernels": kernels,
    }
    Path(out).write_text(json.dumps(record, indent=1) + "\n")
    return record


if __name__ == "__main__":
    pack(*sys.argv[1:4], gpu=sys.argv[4] if len(sys.argv) > 4 else "")
