"""On the device: a real program's Triton launches captured (issue: whole kernels on their data).
A ``@triton.jit`` kernel whose loop runs ``lens[pid]`` times (tests/data/launch_data/seg.py), launched
on the GPU with its data, and, where PyTorch is installed, a small model run through
``torch.compile`` (Inductor's Triton kernels), all under ``bankproof.capture(DIR)``.

    python3 -m lab.gpu.capture_probe OUT/capture
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import bankproof


def main(folder: str) -> None:
    import triton

    report = {"triton": triton.__version__}
    try:
        import torch
    except ImportError:
        torch = None
    report["torch"] = getattr(torch, "__version__", None)
    spec = importlib.util.spec_from_file_location("seg_kernels", "tests/data/launch_data/seg.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with bankproof.capture(folder) as cap:
        if torch is not None:
            x = torch.randn(64 * 64 * 16, device="cuda")
            lens = torch.tensor([3, 5], dtype=torch.int32, device="cuda")
            out = torch.empty(128, device="cuda")
            mod.seg_colsum[(2,)](x, lens, out, BLOCK=64)
            torch.cuda.synchronize()
            model = torch.nn.Sequential(
                torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512)
            ).cuda()
            y = torch.compile(model)(torch.randn(64, 256, device="cuda"))
            y.sum().item()
            report["reference_colsum"] = out.tolist()[:4]
        else:
            import cupy as cp

            class T:  # what Triton needs of a tensor: its address and dtype
                def __init__(self, a):
                    self.a = a
                    self.dtype = {"float32": triton.language.float32, "int32": triton.language.int32}[
                        str(a.dtype)
                    ]

                def data_ptr(self):
                    return self.a.data.ptr

                @property
                def __cuda_array_interface__(self):
                    return self.a.__cuda_array_interface__

            x, lens = cp.zeros(64 * 64 * 16, cp.float32), cp.array([3, 5], cp.int32)
            mod.seg_colsum[(2,)](T(x), T(lens), T(cp.zeros(128, cp.float32)), BLOCK=64)
            cp.cuda.Device().synchronize()
        report["compiles"] = len(cap.compiles)
        report["launches"] = len(cap.launches)
    (Path(folder) / "probe.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
