"""Z3 engine speed: conflict-freedom proof and exact-count certificate.

Targets (issue: Z3 proofs): the conflict-freedom proof of a 128x128 fp16 load with 8 warps in
<= 300 ms, its exact-count certificate in <= 1 s, and a scaling table from 9 to 20 bits.
Baseline in the same process: the enumeration engine on the same access.
"""

from __future__ import annotations

import statistics
import time

from bankproof.models.access import build_access
from bankproof.models.hardware import evaluate
from bankproof.models.notation import parse_layout
from bankproof.proofs.conflicts import conflict_free, exact_degree
from bankproof.proofs.encode import symbolic_access

SWZ = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
DOT = (
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
    "warpsPerCTA = [4, 2], instrShape = [16, 8]}>, kWidth = 2}>"
)
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"
)


def timed(fn, reps: int = 7) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, out


def measure(dist_text: str, shape: list[int], reps: int = 7) -> tuple[float, float, float, str]:
    dist = parse_layout(dist_text, shape).layout
    mem = parse_layout(SWZ, shape).layout
    acc = build_access(dist, mem, 16, "load")
    sa = symbolic_access(dist, mem, 16, acc.instr, acc.vector)
    counts, ideals, _ = evaluate(acc.instr, acc.addresses)
    k = int(counts[0] // ideals[0])
    enum_ms, _ = timed(lambda: evaluate(acc.instr, build_access(dist, mem, 16, "load").addresses), reps)
    proof_ms, proof = timed(lambda: conflict_free(sa), reps)
    cert_ms, cert = timed(lambda: exact_degree(sa, k), reps)
    return proof_ms, cert_ms, enum_ms, f"{proof.status}/{cert.status}"


def main() -> None:
    proof_ms, cert_ms, enum_ms, status = measure(DOT, [128, 128])
    print(
        f"128x128 fp16 load (mma operand A, 8 warps): proof {proof_ms:.0f} ms (target <= 300), "
        f"certificate {cert_ms:.0f} ms (target <= 1000), {status}; enumeration baseline {enum_ms:.1f} ms"
    )
    print(f"proof {proof_ms:.0f} ms (target <= 300): {'PASS' if proof_ms <= 300 else 'FAIL'}")
    print(f"certificate {cert_ms:.0f} ms (target <= 1000): {'PASS' if cert_ms <= 1000 else 'FAIL'}")
    print("bits  shape       proof ms  certificate ms  enumeration ms")
    for bits in range(9, 21):
        rows = bits // 2
        shape = [1 << rows, 1 << (bits - rows)]
        p, c, e, _ = measure(BLOCKED, shape, reps=3)
        print(f"{bits:4d}  {shape[0]:>4}x{shape[1]:<5}  {p:8.0f}  {c:14.0f}  {e:14.1f}")


if __name__ == "__main__":
    main()
