"""Compile the control-flow kernels (tests/data/control_flow/kernels.py) with Triton 3.9.0 for sm90
(4 warps, BM = 64) into TTGIR and PTX files beside them, for tests/test_ledger_control_flow.py.

    python -m lab.control_flow      # needs the triton extra
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "tests" / "data" / "control_flow"
SIGNATURES = {
    "both_arms": {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "BM": "constexpr"},
    "decided_branch": {"x_ptr": "*fp32", "y_ptr": "*fp32", "BM": "constexpr"},
    "early_return": {"x_ptr": "*fp32", "y_ptr": "*fp32", "BM": "constexpr"},
    "flat_persistent": {"x_ptr": "*fp32", "y_ptr": "*fp32", "k_tiles": "i32", "n_tiles": "i32", "BM": "constexpr"},
    "min_loop": {"x_ptr": "*fp32", "y_ptr": "*fp32", "K": "i32", "BM": "constexpr"},
    "loaded_loop": {"x_ptr": "*fp32", "n_ptr": "*i32", "y_ptr": "*fp32", "BM": "constexpr"},
}


def main() -> None:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location("control_flow_kernels", HERE / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, sig in SIGNATURES.items():
        attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t != "constexpr"}
        src = ASTSource(fn=getattr(mod, name), signature=sig, constexprs={"BM": 64}, attrs=attrs)
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        (HERE / f"{name}.ttgir").write_text(k.asm["ttgir"])
        (HERE / f"{name}.ptx").write_text(k.asm["ptx"])
        print(name, "compiled")


if __name__ == "__main__":
    main()
