"""Run the engines on a spec and build the report (schema 1 of DESIGN.md).

Enumeration is exhaustive (every instruction of every warp through the measured hardware
model), so its verdicts are proofs: ``proved`` when every instruction takes its ideal number of
wavefronts, ``refuted`` with a counterexample otherwise, ``unknown`` when the model cannot say.
"""

from __future__ import annotations

import json
import time

import numpy as np

from models.access import Access, build_access
from models.hardware import BANK_BYTES, BANKS, LANES, MEASURED_ARCHS, evaluate, paired, phase_ids
from verifier.spec import AccessSpec, Spec


def find_conflict(access: Access, i: int) -> dict:
    """Two lanes of one phase of instruction ``i`` that hit one bank at different words (the
    lowest such lanes)."""
    ins = access.instr
    offs = access.addresses[i]
    act = np.ones(LANES, dtype=bool)
    if ins.is_matrix:
        act &= np.arange(LANES) < ins.address_lanes
    phase = phase_ids(ins, offs[None], act[None])[0]
    k = 4 if ins.is_matrix else max(1, ins.width // BANK_BYTES)
    for p in sorted(set(phase[act].tolist())):
        seen: dict[int, tuple[int, int]] = {}  # bank -> (word, lane) of the first lane there
        for lane in np.flatnonzero(act & (phase == p)).tolist():
            for j in range(k):
                word = int(offs[lane]) // BANK_BYTES + j
                bank = word % BANKS
                if bank in seen and seen[bank][0] != word:
                    other = seen[bank][1]
                    return {"lanes": [other, lane], "bank": bank, "phase": int(p)}
                seen.setdefault(bank, (word, lane))
    raise AssertionError("no conflict in an instruction that has one")


def check_access(spec: Spec, acc: AccessSpec) -> dict:
    t0 = time.perf_counter()
    a = build_access(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    seconds = time.perf_counter() - t0
    unknown = (
        spec.arch not in MEASURED_ARCHS
        and a.instr.op == "ld"
        and a.instr.width >= 8
        and paired(a.addresses, np.ones(a.addresses.shape, dtype=bool)).any()
    )
    total, ideal = int(counts.sum()), int(ideals.sum())
    worst = int(counts.max()) if len(counts) else 0
    verdict = "unknown" if unknown else "proved" if (counts == ideals).all() else "refuted"
    result = {
        "name": acc.name,
        "kind": acc.kind,
        "instr": a.instr.name,
        "vector": a.vector,
        "instructions": len(counts),
        "wavefronts": None if unknown else total,
        "ideal_wavefronts": ideal,
        "max_wavefronts_per_instruction": None if unknown else worst,
        "conflict_free": None if unknown else verdict == "proved",
        "hardware_model": "measured" if spec.arch in MEASURED_ARCHS else "assumed",
        "engines": {
            "enumeration": {
                "wavefronts": None if unknown else total,
                "verdict": verdict,
                "seconds": round(seconds, 4),
            }
        },
        "proof": {"status": verdict, "engine": "enumeration", "seconds": round(seconds, 4)},
        "counterexample": None,
    }
    if unknown:
        result["proof"]["reason"] = f"paired wide loads are measured on {', '.join(MEASURED_ARCHS)} only"
    if verdict == "refuted":
        i = int(np.flatnonzero(counts > ideals)[0])
        c = find_conflict(a, i)
        lanes = c["lanes"]
        result["counterexample"] = {
            "lanes": lanes,
            "block": int(a.block[i]),
            "warp": int(a.warp[i]),
            "instruction": i,
            "register": int(a.register[i]),
            "coords": [dict(zip(spec.dims, a.coords[i, lane].tolist())) for lane in lanes],
            "byte_addresses": [int(a.addresses[i, lane]) for lane in lanes],
            "bank": c["bank"],
            "phase": c["phase"],
            "wavefronts": int(counts[i]),
            "ideal": int(ideals[i]),
            "reproducer": json.dumps(
                {"instr": a.instr.short, "byte_offsets": a.addresses[i].tolist()}, separators=(",", ":")
            ),
        }
    return result


def verify(spec: Spec) -> dict:
    """The report of ``bankproof verify``."""
    accesses = [check_access(spec, acc) for acc in spec.accesses]
    statuses = [a["proof"]["status"] for a in accesses]
    if "refuted" in statuses:
        verdict = "refuted"
    elif "unknown" in statuses:
        verdict = "unknown"
    else:
        verdict = "proved"
    return {
        "schema": 1,
        "spec": spec.path,
        "arch": spec.arch,
        "dtype": spec.dtype,
        "shape": spec.shape,
        "dims": spec.dims,
        "memory": {"notation": spec.memory_notation, "text": spec.memory_text},
        "verdict": verdict,
        "accesses": accesses,
    }
