"""Kernel analysis speed (bankproof kernel): the CuTe sm80 GEMM mainloop example
(examples/cuda/cute_sm80_gemm.cu: 128 threads, K = 512, 8 k-tiles, 1,056 ldmatrix and 640 cp.async
warp instructions), compiled once by NVRTC (not timed), then analysed: the PTX read, one CTA run by
the PTX machine, every instance counted.

Target: the analysis in under 1 s here. Baseline in the same run: the Triton wing's PTX reader
(verifier/ptx: parse and evaluate the same kernel once, no loops run).
"""

from __future__ import annotations

import sys
from pathlib import Path

from z3_proofs import timed  # bench/ is this script's folder: one timing helper for the benches

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        print("skipped: needs the cuda extra (NVRTC): pip install 'bankproof[cuda]'")
        print("kernel analysis: PASS (skipped)")
        return
    from bankproof.verifier.api.kernel import launch_of
    from bankproof.verifier.kernel.analyse import analyse, source_from_ptx
    from bankproof.verifier.ptx import analyse as triton_analyse
    from bankproof.verifier.ptx import parse_kernel

    from tests import kernel_cases as kc

    case = kc.case("hgemm_tn_sm80")
    ptx = kc.ptx_of(case)
    src = source_from_ptx(ptx, case["source"], "hgemm_tn_sm80", "cuda")
    body = ptx[ptx.index(".visible .entry hgemm_tn_sm80") :]
    base_ms, _ = timed(lambda: triton_analyse(parse_kernel(body)), reps=3)
    ms, r = timed(lambda: kc.analyse_case(case, ptx), reps=3)
    read_ms, _ = timed(lambda: source_from_ptx(ptx, case["source"], "hgemm_tn_sm80"), reps=3)
    launch = launch_of(128, 1, (0, 0, 0), 98304, {"0": 128, "1": 128, "2": 512, "4": 512, "6": 512, "8": 128})
    run_ms, _ = timed(lambda: analyse(src, launch), reps=3)
    ldsm = next(t for t in r.totals if t.kind == "ldsm")
    assert (ldsm.instructions, ldsm.wavefronts) == (1056, 4224), ldsm
    print(
        f"CuTe sm80 GEMM mainloop ({len(src.code.body)} PTX instructions, {r.steps} machine steps): "
        f"read {read_ms:.0f} ms, run and count {run_ms:.0f} ms, whole analysis {ms:.0f} ms; "
        f"baseline (Triton wing's PTX reader, no loops) {base_ms:.0f} ms"
    )
    print(f"kernel analysis {ms:.0f} ms (target < 1000): {'PASS' if ms < 1000 else 'FAIL'}")


if __name__ == "__main__":
    main()
