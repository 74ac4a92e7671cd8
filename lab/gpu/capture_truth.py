"""On the device, under Nsight Compute: the captured ``seg_colsum`` launch's CTA 0 alone (grid 1,
lens = [3]), so its SASS-level counters judge ``triton replay``'s per-CTA totals of the capture
(tests/data/capture_h100).

    ncu --metrics ... python3 -m lab.gpu.capture_truth
"""

from __future__ import annotations

import importlib.util

import torch


def main() -> None:
    spec = importlib.util.spec_from_file_location("seg_kernels", "tests/data/launch_data/seg.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = torch.randn(64 * 64 * 16, device="cuda")
    lens = torch.tensor([3, 5], dtype=torch.int32, device="cuda")
    out = torch.empty(128, device="cuda")
    mod.seg_colsum[(1,)](x, lens, out, BLOCK=64)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
