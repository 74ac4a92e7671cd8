"""Triton 3.9's own bank-conflict count (``ttgl.bank_conflicts``) as an oracle, run without a GPU
through ``triton._filecheck.run_parser``. Run as a script in a subprocess.

stdin: JSON list of {"id", "bits", "shape", "alloc_shape", "register", "lane", "warp", "offset"}.
stdout: one JSON object per line: {"id", "ok", "conflicts" | "error"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import warnings

warnings.filterwarnings("ignore")


def main() -> None:
    from triton._filecheck import run_parser
    from triton.backends.compiler import GPUTarget
    from triton.experimental import gluon
    from triton.experimental.gluon import language as ttgl

    types = {8: ttgl.int8, 16: ttgl.float16, 32: ttgl.float32, 64: ttgl.int64}

    @gluon.jit
    def probe(D: ttgl.constexpr, S: ttgl.constexpr):  # noqa: N803 - Triton constexpr style
        ttgl.static_print("BANK_CONFLICTS", ttgl.bank_conflicts(D, S))

    for case in json.load(sys.stdin):
        try:
            dist = ttgl.DistributedLinearLayout(
                case["register"], case["lane"], case["warp"], [], case["shape"]
            )
            shared = ttgl.SharedLinearLayout(case["offset"])
            d = ttgl.distributed_type(types[case["bits"]], case["shape"], dist)
            s = ttgl.shared_memory_descriptor_type(
                types[case["bits"]], case["shape"], shared, case["alloc_shape"]
            )
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                run_parser(probe, kwargs={"D": d, "S": s}, target=GPUTarget("cuda", 90, 32))
            m = re.search(r"BANK_CONFLICTS (\d+)", out.getvalue())
            row = {"id": case["id"], "ok": bool(m), "conflicts": int(m.group(1)) if m else None}
        except Exception as e:  # noqa: BLE001 - report, keep going
            row = {"id": case["id"], "ok": False, "error": f"{type(e).__name__}: {e}"[:300]}
        sys.stdout.write(json.dumps(row) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
