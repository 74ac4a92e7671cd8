"""Start-up time (issue: the speed it promised): ``bankproof --help`` and ``bankproof --version``
each within 0.25 s (median of 9 runs, a fresh interpreter each), next to a bare
``python -c pass`` measured in the same run as the baseline.

    python bench/startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

TARGET_S = 0.25
CASES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "bankproof --help": [sys.executable, "-m", "bankproof.verifier.cli.main", "--help"],
    "bankproof --version": [sys.executable, "-m", "bankproof.verifier.cli.main", "--version"],
}


def median_s(cmd: list[str], reps: int = 9) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    results = {name: median_s(cmd) for name, cmd in CASES.items()}
    base = results.pop("python -c pass (baseline)")
    print(f"{'python -c pass (baseline)':28} {base:6.3f} s")
    ok = True
    for name, s in results.items():
        ok &= s <= TARGET_S
        print(f"{name:28} {s:6.3f} s  ({s / base:4.1f}x the baseline)")
    print(f"worst {max(results.values()):.3f} s (target <= {TARGET_S} s): {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
