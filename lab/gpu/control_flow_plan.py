"""Plan GPU runs of the control-flow kernels (``tests/data/control_flow``, compiled here by
``python -m lab.control_flow``): each launched with a grid and arguments that make its branches go
one way or the other (``lab/gpu/triton_kernels.py run`` launches them; ``device_triton.sh`` runs
that under Nsight Compute). The ledger's totals for a run are the sum over its CTAs of each CTA's
ledger (its program ids given), which ``tests/test_ledger_control_flow.py`` recomputes.

Usage: ``python -m lab.gpu.control_flow_plan DIR``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lab.control_flow import HERE, SIGNATURES

# (run name, kernel, grid, integer arguments, int32 fill of the pointer buffers)
RUNS = [
    ("both_arms_then", "both_arms", (1, 1, 1), {"M": 128}, 0),
    ("both_arms_else", "both_arms", (1, 1, 1), {"M": 100}, 0),
    ("decided_branch_3x2", "decided_branch", (3, 2, 1), {}, 0),
    ("early_return_4", "early_return", (4, 1, 1), {}, 0),
    ("flat_persistent_4x3", "flat_persistent", (1, 1, 1), {"k_tiles": 4, "n_tiles": 3}, 0),
    ("min_loop_100", "min_loop", (1, 1, 1), {"K": 100}, 0),
    ("min_loop_1000", "min_loop", (1, 1, 1), {"K": 1000}, 0),
    ("loaded_loop_192", "loaded_loop", (1, 1, 1), {}, 192),
]
BUFFER_BYTES = 1 << 20


def ctas(grid: tuple[int, int, int]) -> list[dict[str, int]]:
    """Every CTA's launch values (``program_id_x``, ..., ``num_programs_x``, ...)."""
    gx, gy, gz = grid
    return [{"program_id_x": x, "program_id_y": y, "program_id_z": z, "num_programs_x": gx,
             "num_programs_y": gy, "num_programs_z": gz}
            for z in range(gz) for y in range(gy) for x in range(gx)]  # fmt: skip


def prepare(out_dir: str) -> None:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import importlib.util

    import triton
    from bankproof.verifier.ptx import parse_kernel
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location("control_flow_kernels", HERE / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    compiled = {}
    plan = []
    for name, kernel, grid, args, fill in RUNS:
        sig = SIGNATURES[kernel]
        if kernel not in compiled:
            attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t != "constexpr"}
            src = ASTSource(fn=getattr(mod, kernel), signature=sig, constexprs={"BM": 64}, attrs=attrs)
            compiled[kernel] = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
            assert compiled[kernel].asm["ttgir"] == (HERE / f"{kernel}.ttgir").read_text(), (
                "recompile the fixtures"
            )
            (out / f"{kernel}.cubin").write_bytes(compiled[kernel].asm["cubin"])
        k = compiled[kernel]
        ptx = parse_kernel(k.asm["ptx"])
        names = [n for n, t in sig.items() if t != "constexpr"]
        params = []
        for i, (ptype, _) in enumerate(ptx.params):
            n = names[i] if i < len(names) else f"scratch{i - len(names)}"
            if n in args:
                params.append({"name": n, "type": ptype, "value": args[n]})
            else:
                params.append({"name": n, "type": ptype, "buffer": BUFFER_BYTES if i < len(names) else 0,
                               "fill": fill})  # fmt: skip
        plan.append({"name": name, "kernel": ptx.name, "cubin": f"{kernel}.cubin", "source": kernel,
                     "threads": ptx.threads, "shared": int(k.metadata.shared), "params": params,
                     "args": args, "grid": list(grid), "ledger_totals": {}})  # fmt: skip
    (out / "plan.json").write_text(
        json.dumps({"arch": "sm90", "triton": triton.__version__, "kernels": plan}, indent=1)
    )
    print(f"{len(plan)} runs -> {out}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m lab.gpu.control_flow_plan DIR")
    prepare(sys.argv[1])
