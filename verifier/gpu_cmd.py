"""``bankproof gpu SPEC``: run the spec's store and load on the GPU, check every element, and
(with Nsight Compute) measure the wavefronts next to the prediction. Needs CuPy and a GPU."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bankproof.models.errors import InputError


def _require_gpu() -> None:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no device")
    except Exception:  # noqa: BLE001 - any failure means "no usable GPU here"
        raise InputError(
            "gpu",
            "device",
            "needs CuPy and an NVIDIA GPU (pip install 'bankproof[gpu]'); none is usable here",
        ) from None


def run(args: argparse.Namespace) -> int:
    if args.repeat < 1 or args.repeat > 1000:
        raise InputError("gpu", "--repeat", "must be between 1 and 1000", args.repeat)
    from bankproof.gpu_checks.layout_runs import check_data, spec_case
    from bankproof.gpu_checks.layout_runs import collect as collect_runs
    from bankproof.gpu_checks.layout_runs import run as run_cases

    case = spec_case(args.spec)  # input errors first, GPU or not
    _require_gpu()
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w") as fh:
            json.dump([case], fh)
        bad = 0
        for k in range(args.repeat):
            out = os.path.join(tmp, f"out{k}.npz")
            run_cases(plan, out)
            bad += check_data(case, np.load(out)["0"])
        measured = None
        if shutil.which("ncu"):
            from bankproof.gpu_checks.measure import METRICS

            out = os.path.join(tmp, "ncu.npz")
            csv = os.path.join(tmp, "ncu.csv")
            with open(csv, "w") as fh:
                subprocess.run(
                    [
                        "ncu",
                        "--csv",
                        "--page",
                        "raw",
                        "--metrics",
                        ",".join(METRICS),
                        sys.executable,
                        "-m",
                        "bankproof.gpu_checks.layout_runs",
                        "run",
                        plan,
                        out,
                    ],
                    stdout=fh,
                    stderr=subprocess.DEVNULL,
                    check=True,
                    timeout=600,
                )
            res = os.path.join(tmp, "res.json")
            collect_runs(plan, out, csv, res)
            with open(res) as fh:
                measured = json.load(fh)["runs"][0]["measured"]
    lines = [
        f"{args.spec}: {args.repeat} run(s), data {'correct' if bad == 0 else f'WRONG ({bad} elements)'}"
    ]
    ok = bad == 0
    for side in ("store", "load"):
        pred = case[side]["predicted"]
        if measured is None:
            lines.append(
                f"  {side:5} {case[side]['instr']:6} predicted {pred} wavefronts (no ncu: not measured)"
            )
        else:
            lines.append(
                f"  {side:5} {case[side]['instr']:6} predicted {pred:6} measured {measured[side]:6} "
                f"{'ok' if measured[side] == pred else 'MISMATCH'}"
            )
            ok &= measured[side] == pred
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if ok else 4
