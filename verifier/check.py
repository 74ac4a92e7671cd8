"""Run the engines on a spec and build the report (schema 1 of DESIGN.md).

Enumeration is exhaustive (every instruction of every warp through the measured hardware
model), so its verdicts are proofs: ``proved`` when every instruction takes its ideal number of
wavefronts, ``refuted`` with a counterexample otherwise, ``unknown`` when the model cannot say.
"""

from __future__ import annotations

import json
import time

import numpy as np
from bankproof.models.access import Access, build_access
from bankproof.models.errors import InputError, log2
from bankproof.models.hardware import BANK_BYTES, BANKS, LANES, MEASURED_ARCHS, evaluate, paired, phase_ids
from bankproof.models.layout import LinearLayout
from bankproof.models.swizzle import Space, lemma_9_4
from bankproof.verifier.spec import AccessSpec, Spec


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


ENGINES = ("enumeration", "algebra", "z3")


def _counterexample(spec: Spec, a: Access, i: int, lanes: list[int], count: int, ideal: int) -> dict:
    ins = a.instr
    offs = a.addresses[i]
    act = np.ones(LANES, dtype=bool)
    phase = phase_ids(ins, offs[None], act[None])[0]
    k = 4 if ins.is_matrix else max(1, ins.width // BANK_BYTES)
    banks0 = {(int(offs[lanes[0]]) // BANK_BYTES + j) % BANKS for j in range(k)}
    banks1 = {(int(offs[lanes[1]]) // BANK_BYTES + j) % BANKS for j in range(k)}
    return {
        "lanes": lanes,
        "block": int(a.block[i]),
        "warp": int(a.warp[i]),
        "instruction": i,
        "register": int(a.register[i]),
        "coords": [dict(zip(spec.dims, a.coords[i, lane].tolist())) for lane in lanes],
        "byte_addresses": [int(offs[lane]) for lane in lanes],
        "bank": min(banks0 & banks1) if banks0 & banks1 else None,
        "phase": int(phase[lanes[0]]),
        "wavefronts": count,
        "ideal": ideal,
        "reproducer": json.dumps({"instr": ins.short, "byte_offsets": offs.tolist()}, separators=(",", ":")),
    }


def _enumeration(spec: Spec, a: Access) -> tuple[dict, dict | None, np.ndarray, np.ndarray]:
    t0 = time.perf_counter()
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    unknown = (
        spec.arch not in MEASURED_ARCHS
        and a.instr.op == "ld"
        and a.instr.width >= 8
        and paired(a.addresses, np.ones(a.addresses.shape, dtype=bool)).any()
    )
    verdict = "unknown" if unknown else "proved" if (counts == ideals).all() else "refuted"
    result = {
        "wavefronts": None if unknown else int(counts.sum()),
        "verdict": verdict,
        "seconds": round(time.perf_counter() - t0, 4),
    }
    if unknown:
        result["reason"] = f"paired wide loads are measured on {', '.join(MEASURED_ARCHS)} only"
    cx = None
    if verdict == "refuted":
        i = int(np.flatnonzero(counts > ideals)[0])
        c = find_conflict(a, i)
        cx = _counterexample(spec, a, i, c["lanes"], int(counts[i]), int(ideals[i]))
    return result, cx, counts, ideals


def _algebra(spec: Spec, acc: AccessSpec, a: Access, instructions: int, phases: int) -> dict:
    t0 = time.perf_counter()
    if not isinstance(spec.memory, LinearLayout):
        return {"wavefronts": None, "verdict": "n/a", "reason": "the memory layout is not linear (padded)"}
    lem = lemma_9_4(
        spec.memory.with_in_bases("block", []), acc.layout, spec.elem_bits, acc.kind, log2(a.vector)
    )
    if not lem.applies:
        return {"wavefronts": None, "verdict": "n/a", "reason": lem.reason}
    per = lem.wavefronts_per_instruction
    space = Space.of(spec.memory, spec.dims)
    out = {
        "wavefronts": per * instructions,
        "verdict": "proved" if per == phases else "refuted",
        "seconds": round(time.perf_counter() - t0, 4),
        "lemma": "9.4",
        "conflict_directions": [space.name(v) for v in lem.directions],
    }
    if not lem.paper_applies:
        out["note"] = f"the paper's hypotheses fail ({lem.reason}); the count is this model's generalization"
    return out


def _z3(
    spec: Spec, acc: AccessSpec, a: Access, k: int | None, phases: int, timeout_s: float
) -> tuple[dict, dict | None]:
    from bankproof.proofs.conflicts import conflict_free, exact_degree
    from bankproof.proofs.encode import symbolic_access

    ms = int(timeout_s * 1000)
    sa = symbolic_access(acc.layout, spec.memory, spec.elem_bits, a.instr, a.vector)
    p = conflict_free(sa, ms)
    out: dict = {"wavefronts": None, "verdict": p.status, "seconds": round(p.seconds, 4)}
    if p.status == "unknown":
        out["reason"] = p.reason
    cx_lanes = None
    if p.status == "refuted":
        m = p.model
        chunk = m.get("reg", 0)
        idx = np.flatnonzero(
            (a.block == m.get("block", 0)) & (a.warp == m.get("warp", 0)) & (a.register == chunk * a.vector)
        )
        cx_lanes = (int(idx[0]), [m["x"], m["y"]])
    if k is not None and isinstance(spec.memory, LinearLayout) and p.status != "unknown":
        cert = exact_degree(sa, k, ms)
        out["certificate"] = {"words_per_bank": k, "status": cert.status, "seconds": round(cert.seconds, 4)}
        if cert.status == "proved":
            out["certificate"]["witness_lanes"] = cert.model["lanes"]
            out["wavefronts"] = k * phases * len(a.addresses)  # linear: every phase alike
        elif cert.status == "refuted":
            out["verdict"] = "disagree"
            out["reason"] = cert.reason
    return out, cx_lanes


def check_access(
    spec: Spec, acc: AccessSpec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0
) -> dict:
    try:
        a = build_access(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    except InputError as e:  # name the access the problem is in
        if e.where != "access":
            raise
        where = f"spec: access[{spec.accesses.index(acc)}] ({acc.name})"
        raise InputError(where, e.field, e.problem, e.value) from None
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    instructions, phases = len(counts), int(ideals[0]) if len(ideals) else 0
    results: dict[str, dict] = {}
    cx = z3_cx = None
    if "enumeration" in engines:
        results["enumeration"], cx, counts, ideals = _enumeration(spec, a)
    if "algebra" in engines:
        results["algebra"] = _algebra(spec, acc, a, instructions, phases)
    if "z3" in engines:
        linear = isinstance(spec.memory, LinearLayout)
        k = int(counts[0] // ideals[0]) if linear and len(counts) and ideals[0] else None
        results["z3"], z3_cx = _z3(spec, acc, a, k, phases, timeout_s)
    answered = {e: r for e, r in results.items() if r["verdict"] in ("proved", "refuted")}
    totals = {r["wavefronts"] for r in answered.values() if r["wavefronts"] is not None}
    if (
        any(r["verdict"] == "disagree" for r in results.values())
        or len({r["verdict"] for r in answered.values()}) > 1
        or len(totals) > 1
    ):
        verdict = "disagree"
    elif answered:
        verdict = next(iter(answered.values()))["verdict"]
    else:
        verdict = "unknown"
    decider = next((e for e in ("z3", "enumeration", "algebra") if e in answered), next(iter(results)))
    if verdict == "refuted" and cx is None and z3_cx is not None:
        i, lanes = z3_cx
        cx = _counterexample(spec, a, i, sorted(lanes), int(counts[i]), int(ideals[i]))
    total = next(iter(totals)) if len(totals) == 1 else None
    worst = int(counts.max()) if len(counts) and total is not None else None
    return {
        "name": acc.name,
        "kind": acc.kind,
        "instr": a.instr.name,
        "vector": a.vector,
        "instructions": instructions,
        "wavefronts": total,
        "ideal_wavefronts": int(ideals.sum()),
        "max_wavefronts_per_instruction": worst,
        "conflict_free": None if verdict not in ("proved", "refuted") else verdict == "proved",
        "hardware_model": "measured" if spec.arch in MEASURED_ARCHS else "assumed",
        "engines": results,
        "proof": {
            "status": verdict,
            "engine": decider,
            "seconds": results[decider].get("seconds"),
            **({"reason": results[decider]["reason"]} if "reason" in results[decider] else {}),
        },
        "counterexample": cx if verdict == "refuted" else None,
    }


def verify(spec: Spec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> dict:
    """The report of ``bankproof verify``."""
    accesses = [check_access(spec, acc, engines, timeout_s) for acc in spec.accesses]
    statuses = [a["proof"]["status"] for a in accesses]
    if "disagree" in statuses:
        verdict = "disagree"
    elif "refuted" in statuses:
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
