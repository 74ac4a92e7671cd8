"""TTGIR scan speed (issues: regression-check the compiler's choices; the speed it promised):
scanning one compiled kernel in <= 20 ms (median, cold caches), and scanning the pipelined matmul
with its whole-kernel ledger (every PTX shared-memory instruction evaluated for every thread) in
<= 50 ms. Baseline in the same
process: reading the text alone (``read_ttgir``), so the ratio shows what the analysis costs on
top of parsing.

    python bench/triton_scan.py
"""

from __future__ import annotations

from pathlib import Path

from bankproof.models.access import clear_caches
from bankproof.verifier.triton.accesses import count_cached, parse_cached
from bankproof.verifier.triton.ledger import build
from bankproof.verifier.triton.scan import scan_text
from bankproof.verifier.triton.ttgir import read_ttgir
from enumerate_access import median_ms  # the benches' shared timer (this folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    ROOT / "tests" / "data" / "matmul_pipelined_sm80.ttgir",
    ROOT / "verifier" / "triton" / "sample.ttgir",
]
LEDGER = ROOT / "tests" / "data" / "matmul_fp16_128x128x32_sm80"  # .ttgir and .ptx of one compile
SCAN_MS = 20.0
LEDGER_MS = 50.0


def cold_scan(text: str, name: str) -> dict:
    """One scan with the memo caches emptied first, as for the first kernel a process sees."""
    parse_cached.cache_clear()
    count_cached.cache_clear()
    clear_caches()
    return scan_text(text, name)


def main() -> None:
    worst = 0.0
    for path in FILES:
        text = path.read_text()
        base = median_ms(lambda t=text: read_ttgir(t), reps=15)
        full = median_ms(lambda t=text, p=path: cold_scan(t, p.name), reps=15)
        n = sum(len(b.accesses) for b in scan_text(text, path.name).buffers)
        worst = max(worst, full)
        print(
            f"{path.name:32} {n:3} accesses  scan {full:7.2f} ms  read {base:6.2f} ms  "
            f"ratio {full / base:6.1f}x"
        )
    scan_worst, worst = worst, 0.0
    text, ptx = LEDGER.with_suffix(".ttgir").read_text(), LEDGER.with_suffix(".ptx").read_text()
    base = median_ms(lambda: read_ttgir(text), reps=15)
    full = median_ms(lambda: build(cold_scan(text, LEDGER.name), text, ptx), reps=15)
    n = sum(len(e.ptx_lines) for e in build(scan_text(text), text, ptx).entries)
    worst = max(worst, full)
    print(
        f"{LEDGER.name + ' +ledger':32} {n:3} PTX instr  scan {full:7.2f} ms  read {base:6.2f} ms  "
        f"ratio {full / base:6.1f}x"
    )
    print(
        f"worst scan {scan_worst:.2f} ms per kernel (target <= {SCAN_MS:.0f} ms): "
        f"{'PASS' if scan_worst <= SCAN_MS else 'FAIL'}"
    )
    print(
        f"scan with the ledger {worst:.2f} ms (target <= {LEDGER_MS:.0f} ms): "
        f"{'PASS' if worst <= LEDGER_MS else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
