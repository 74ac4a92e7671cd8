"""The GPU as judge for one problem: store a tensor of distinct values through the memory layout
with the first store access, load it back with the first load access, check every element, and
(with Nsight Compute) measure the wavefronts next to the prediction. Needs CuPy and a GPU.

Also the planning step of the device scripts (``python -m bankproof.verifier.api.gpu plan PLAN.json
SPEC.toml ... [--random N] [--matrix] [--wide-matrix] [--stsm-trans]``), which reads spec files
and so lives here, above ``gpu_checks``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.verifier.api.spec_file import load_spec
from bankproof.verifier.engine.spec import Spec
from bankproof.verifier.results import SCHEMA, GpuResult, GpuSide


def _require_gpu() -> None:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception:  # noqa: BLE001 - any failure means "no usable GPU here"
        raise InputError(
            "gpu",
            "device",
            "needs CuPy and a CUDA GPU (pip install 'bankproof[gpu]'); none is usable here",
        ) from None


def spec_case(spec: Spec) -> dict:
    """The layout run of a problem's first store and first load."""
    from bankproof.gpu_checks.layout_cases import case_from_layouts

    stores = [a for a in spec.accesses if a.kind == "store"]
    loads = [a for a in spec.accesses if a.kind == "load"]
    if not stores or not loads:
        raise InputError("gpu", "spec", "needs a store access and a load access")
    st, ld = stores[0], loads[0]
    try:
        return case_from_layouts(
            spec.path, st.layout, ld.layout, spec.memory, spec.elem_bits, st.instr, ld.instr
        )
    except InputError:
        raise
    except ValueError as e:  # what one GPU run cannot do: a buffer over 48 KB, other warps, more than a CTA
        raise InputError("gpu", "spec", f"cannot be run as one kernel: {e}") from None


def gpu_check(spec: Spec | str | Path, repeat: int = 1) -> GpuResult:
    """Run ``spec``'s store and load ``repeat`` times on the GPU (a spec, or its file's path);
    measure with ncu when present."""
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
        target.require(spec.arch, "gpu", "gpu")
    if not isinstance(repeat, int) or not 1 <= repeat <= 1000:
        raise InputError("gpu", "repeat", "must be between 1 and 1000", repeat)
    from bankproof.gpu_checks.layout_runs import check_data
    from bankproof.gpu_checks.layout_runs import collect as collect_runs
    from bankproof.gpu_checks.layout_runs import run as run_cases
    from bankproof.gpu_checks.measure import METRICS

    case = spec_case(spec)  # input errors first, GPU or not
    _require_gpu()
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w") as fh:
            json.dump([case], fh)
        bad = 0
        for k in range(repeat):
            out = os.path.join(tmp, f"out{k}.npz")
            run_cases(plan, out)
            bad += check_data(case, np.load(out)["0"])
        measured = None
        if shutil.which("ncu"):
            out = os.path.join(tmp, "ncu.npz")
            csv = os.path.join(tmp, "ncu.csv")
            with open(csv, "w") as fh:
                subprocess.run(
                    ["ncu", "--csv", "--page", "raw", "--metrics", ",".join(METRICS), sys.executable, "-m",
                     "bankproof.gpu_checks.layout_runs", "run", plan, out],
                    stdout=fh, stderr=subprocess.DEVNULL, check=True, timeout=600,
                )  # fmt: skip
            res = os.path.join(tmp, "res.json")
            collect_runs(plan, out, csv, res)
            with open(res) as fh:
                measured = json.load(fh)["runs"][0]["measured"]

    def side(name: str) -> GpuSide:
        return GpuSide(
            case[name]["instr"], case[name]["predicted"], None if measured is None else measured[name]
        )

    return GpuResult(SCHEMA, spec.path, repeat, int(bad), side("store"), side("load"))


def plan(argv: list[str]) -> None:
    """Write the device scripts' plan: spec files' cases, then random and matrix families."""
    from bankproof.gpu_checks import layout_cases as lc

    specs = [a for a in argv[1:] if a.endswith(".toml")]
    n = int(argv[argv.index("--random") + 1]) if "--random" in argv else 0
    cases = (
        [spec_case(load_spec(p)) for p in specs]
        + lc.random_cases(n)
        + (lc.matrix_cases() if "--matrix" in argv else [])
        + (lc.wide_matrix_cases() if "--wide-matrix" in argv else [])
        + (lc.stmatrix_trans_cases() if "--stsm-trans" in argv else [])
    )
    with open(argv[0], "w") as fh:
        json.dump(cases, fh)
    print(f"{len(cases)} cases -> {argv[0]}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "plan":
        raise SystemExit(__doc__)
    plan(sys.argv[2:])


__all__ = ["gpu_check", "spec_case", "plan"]
