"""Triton 3.9.0's ``BankConflictTest.bankConflictsWavefront64`` cases (unittest/Dialect/TritonGPU/
SwizzleTest.cpp): AMD dot operands and blocked layouts over swizzled and rotating shared layouts,
32 banks (gfx942) and 64 (gfx950). Triton checks its counter against a brute force
(``bruteforceBankConflictsPerWavefront64``: extra wavefronts per wavefront, phases of
``banks / words-per-lane`` consecutive lanes, or for 128-bit reads its lane-bit phase function); the
brute force is transcribed here from that source as the oracle.

For 64- and 32-bit reads Triton's brute force counts whole instructions, and bankproof equals it.
For 128-bit reads Triton's counts a *lane tile*: lanes outside ``laneTile.laneAddr`` are folded onto
the tile's addresses (what its swizzle optimizer reasons about), a different quantity from an
instruction's cycles; bankproof's count equals the same brute force without the fold (the phase
function is bankproof's published grouping), and both values are recorded."""

from __future__ import annotations

import numpy as np
import pytest
from bankproof.models import target
from bankproof.verifier.api.spec_file import parse_spec


def _dot(version: int, instr: str, k_width: int, op: int) -> str:
    parent = f"#ttg.amd_mfma<{{version = {version}, warpsPerCTA = [4, 1], instrShape = {instr}, isTransposed = true}}>"
    return f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}, kWidth = {k_width}}}>"


def _shared(vec: int, per: int, most: int, order: str, kind: str = "swizzled_shared") -> str:
    return f"#ttg.{kind}<{{vec = {vec}, perPhase = {per}, maxPhase = {most}, order = {order}}}>"


BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 16], warpsPerCTA = [4, 1], order = [1, 0]}>"
)
# (register layout, shared layout, shape, banks, laneTile.laneAddr,
#  bankproof's extra wavefronts per wavefront, Triton's brute force as written)
CASES = {
    "blocked_swizzled_32banks": (BLOCKED, _shared(8, 1, 16, "[1, 0]"), [128, 128], 32, [0, 1, 4], 0, 1),
    "blocked_swizzled_64banks": (BLOCKED, _shared(8, 1, 16, "[1, 0]"), [128, 128], 64, [0, 1, 3, 4], 0, 1),
    "dotA_mfma3_32banks": (_dot(3, "[32, 32, 8]", 4, 0), _shared(4, 1, 16, "[1, 0]"), [128, 128], 32, [], 0, 0),
    "dotA_mfma4_64banks": (_dot(4, "[32, 32, 16]", 8, 0), _shared(8, 1, 16, "[1, 0]"), [128, 128], 64,
                           [0, 1, 3, 4], 0, 1),
    "dotB_mfma3_rotating_32banks": (_dot(3, "[32, 32, 8]", 4, 1), _shared(4, 1, 16, "[0, 1]", "amd_rotating_shared"),
                                    [64, 128], 32, [], 0, 0),
    "dotB_mfma4_rotating_64banks": (_dot(4, "[32, 32, 16]", 4, 1), _shared(4, 2, 8, "[0, 1]", "amd_rotating_shared"),
                                    [64, 128], 64, [], 1, 1),
}  # fmt: skip


def triton_bruteforce(addresses: np.ndarray, words: int, banks: int, lane_addr: list[int] | None) -> float:
    """``bruteforceBankConflictsPerWavefront64`` over per-lane byte addresses of each instruction;
    ``lane_addr`` None: no lane-tile fold (every lane at its own address)."""
    per_phase = banks // words
    phases = 64 // per_phase
    total = 0
    for row in addresses:
        sets: list[set[int]] = [set() for _ in range(phases)]
        for lane in range(64):
            if words == 4:
                t = [(lane >> k) & 1 for k in range(6)]
                p = t[5] | (t[2] ^ t[4]) << 1 | t[3] << 2 if banks == 32 else t[5] | (t[2] ^ t[3] ^ t[4]) << 1
                m = lane if lane_addr is None else sum(lane & (1 << s) for s in lane_addr)
            else:
                p, m = lane // per_phase, lane if lane_addr is None else lane % per_phase
            sets[p].update(int(row[m]) // 4 + w for w in range(words))
        for s in sets:
            total += int(np.bincount([o % banks for o in s], minlength=banks).max())
    return total / (len(addresses) * phases) - 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_wave64_bank_conflict_cases(name):
    reg, shared, shape, banks, lane_addr, ours, tritons = CASES[name]
    arch = {32: "gfx942", 64: "gfx950"}[banks]
    spec = parse_spec({"shape": shape, "dtype": "f16", "arch": arch, "memory": {"triton": shared},
                       "access": [{"name": "read", "kind": "load", "layout": {"triton": reg}}]})  # fmt: skip
    acc = spec.accesses[0]
    a = target.build(arch, acc.layout, spec.memory, spec.elem_bits, "load", "auto")
    c = target.count(arch, a)
    words = a.instr.width // 4
    assert c.counts.sum() / c.ideals.sum() - 1 == ours
    assert triton_bruteforce(a.addresses, words, banks, None) == ours  # the same rule, whole instructions
    assert triton_bruteforce(a.addresses, words, banks, lane_addr) == tritons  # Triton's, as it counts
    if words < 4:
        assert ours == tritons
