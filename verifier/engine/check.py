"""Run the engines on a problem and build its :class:`~bankproof.verifier.results.VerifyResult`.

Enumeration is exhaustive (every instruction of every warp through the measured hardware
model), so its verdicts are proofs: ``proved`` when every instruction takes its ideal number of
wavefronts, ``refuted`` with a counterexample otherwise, ``unknown`` when the model cannot say.

>>> from bankproof.verifier.engine.spec import parse_spec
>>> blocked = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
>>> spec = parse_spec({"shape": [32], "dtype": "f32", "memory": {"formula": "i"},
...                    "access": [{"name": "st", "kind": "store", "layout": {"triton": blocked}}]})
>>> r = verify(spec)
>>> r.verdict, r.accesses[0].wavefronts, r.accesses[0].state
('proved', 1, 'conflict-free')
"""

from __future__ import annotations

import json
import time

import numpy as np
from bankproof.models import amd
from bankproof.models.access import WarpInstructions, build_access
from bankproof.models.errors import InputError, log2
from bankproof.models.hardware import (
    BANKS,
    LANES,
    UNMODELED_REASON,
    evaluate,
    model_status,
    phase_ids,
    unmodeled,
)
from bankproof.models.layout import LinearLayout
from bankproof.models.swizzle import Space, lemma_9_4
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.results import (
    AccessResult,
    Certificate,
    Counterexample,
    EngineResult,
    MemoryRef,
    Proof,
    VerifyResult,
)


def find_conflict(access: WarpInstructions, i: int) -> dict:
    """Two lanes of one phase of instruction ``i`` that hit one bank at different words (the
    lowest such lanes)."""
    ins = access.instr
    offs = access.addresses[i]
    act = np.ones(LANES, dtype=bool)
    if ins.is_matrix:
        act &= np.arange(LANES) < ins.address_lanes
    phase = phase_ids(ins, offs[None], act[None])[0]
    for p in sorted(set(phase[act].tolist())):
        seen: dict[int, tuple[int, int]] = {}  # bank -> (word, lane) of the first lane there
        for lane in np.flatnonzero(act & (phase == p)).tolist():
            for word in ins.words(int(offs[lane])):
                bank = word % BANKS
                if bank in seen and seen[bank][0] != word:
                    other = seen[bank][1]
                    return {"lanes": [other, lane], "bank": bank, "phase": int(p)}
                seen.setdefault(bank, (word, lane))
    raise AssertionError("no conflict in an instruction that has one")


ENGINES = ("enumeration", "algebra", "z3")
ENGINE_NAMES = {  # what --engine (and the API's engines=) accept
    "enum": ("enumeration",),
    "algebra": ("algebra",),
    "z3": ("z3",),
    "all": ENGINES,
}


def _counterexample(
    spec: Spec, a: WarpInstructions, i: int, lanes: list[int], count: int, ideal: int
) -> Counterexample:
    ins = a.instr
    offs = a.addresses[i]
    act = np.ones(LANES, dtype=bool)
    phase = phase_ids(ins, offs[None], act[None])[0]
    banks0 = {w % BANKS for w in ins.words(int(offs[lanes[0]]))}
    banks1 = {w % BANKS for w in ins.words(int(offs[lanes[1]]))}
    return Counterexample(
        lanes=(lanes[0], lanes[1]),
        block=int(a.block[i]),
        warp=int(a.warp[i]),
        instruction=i,
        register=int(a.register[i]),
        coords=tuple(dict(zip(spec.dims, a.coords[i, lane].tolist())) for lane in lanes),
        byte_addresses=(int(offs[lanes[0]]), int(offs[lanes[1]])),
        bank=min(banks0 & banks1) if banks0 & banks1 else None,
        phase=int(phase[lanes[0]]),
        wavefronts=count,
        ideal=ideal,
        reproducer=json.dumps({"instr": ins.short, "byte_offsets": offs.tolist()}, separators=(",", ":")),
    )


def _enumeration(
    spec: Spec, a: WarpInstructions
) -> tuple[EngineResult, Counterexample | None, np.ndarray, np.ndarray]:
    t0 = time.perf_counter()
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    unknown = bool(unmodeled(a.instr, a.addresses, np.ones(a.addresses.shape, dtype=bool), spec.arch).any())
    verdict = "unknown" if unknown else "proved" if (counts == ideals).all() else "refuted"
    result = EngineResult(
        wavefronts=None if unknown else int(counts.sum()),
        verdict=verdict,
        seconds=round(time.perf_counter() - t0, 4),
        reason=UNMODELED_REASON if unknown else None,
    )
    cx = None
    if verdict == "refuted":
        i = int(np.flatnonzero(counts > ideals)[0])
        c = find_conflict(a, i)
        cx = _counterexample(spec, a, i, c["lanes"], int(counts[i]), int(ideals[i]))
    return result, cx, counts, ideals


def _algebra(
    spec: Spec, acc: AccessSpec, a: WarpInstructions, instructions: int, phases: int
) -> EngineResult:
    t0 = time.perf_counter()
    if not isinstance(spec.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)")
    lem = lemma_9_4(
        spec.memory.with_in_bases("block", []), acc.layout, spec.elem_bits, acc.kind, log2(a.vector)
    )
    if not lem.applies:
        return EngineResult(None, "n/a", reason=lem.reason)
    per = lem.wavefronts_per_instruction
    space = Space.of(spec.memory, spec.dims)
    return EngineResult(
        wavefronts=per * instructions,
        verdict="proved" if per == phases else "refuted",
        seconds=round(time.perf_counter() - t0, 4),
        lemma="9.4",
        conflict_directions=tuple(space.name(v) for v in lem.directions),
        note=None
        if lem.paper_applies
        else f"the paper's hypotheses fail ({lem.reason}); the count is this model's generalization",
    )


def _z3(
    spec: Spec, acc: AccessSpec, a: WarpInstructions, k: int | None, phases: int, timeout_s: float
) -> tuple[EngineResult, tuple[int, list[int]] | None]:
    from bankproof.proofs.conflicts import conflict_free, exact_degree
    from bankproof.proofs.encode import symbolic_access

    ms = int(timeout_s * 1000)
    sa = symbolic_access(acc.layout, spec.memory, spec.elem_bits, a.instr, a.vector)
    p = conflict_free(sa, ms)
    verdict, reason, wavefronts, certificate = (
        p.status,
        p.reason if p.status == "unknown" else None,
        None,
        None,
    )
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
        certificate = Certificate(
            words_per_bank=k,
            status=cert.status,
            seconds=round(cert.seconds, 4),
            witness_lanes=cert.model["lanes"] if cert.status == "proved" else None,
        )
        if cert.status == "proved":
            wavefronts = k * phases * len(a.addresses)  # linear: every phase alike
        elif cert.status == "refuted":
            verdict, reason = "disagree", cert.reason
    out = EngineResult(wavefronts, verdict, round(p.seconds, 4), reason, certificate=certificate)
    return out, cx_lanes


def check_access(
    spec: Spec, acc: AccessSpec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0
) -> AccessResult:
    """Every engine's answer for one access of ``spec``, and the verdict they agree on."""
    if amd.check_arch(spec.arch):
        return check_amd_access(spec, acc, engines, timeout_s)
    try:
        a = build_access(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    except InputError as e:  # name the access the problem is in
        if e.where != "access":
            raise
        where = f"spec: access[{spec.accesses.index(acc)}] ({acc.name})"
        raise InputError(where, e.field, e.problem, e.value) from None
    counts, ideals, _ = evaluate(a.instr, a.addresses)
    instructions, phases = len(counts), int(ideals[0]) if len(ideals) else 0
    results: dict[str, EngineResult] = {}
    cx = z3_cx = None
    if "enumeration" in engines:
        results["enumeration"], cx, counts, ideals = _enumeration(spec, a)
    if "algebra" in engines:
        results["algebra"] = _algebra(spec, acc, a, instructions, phases)
    if "z3" in engines:
        linear = isinstance(spec.memory, LinearLayout)
        k = int(counts[0] // ideals[0]) if linear and len(counts) and ideals[0] else None
        results["z3"], z3_cx = _z3(spec, acc, a, k, phases, timeout_s)
    verdict, total = agree(results)
    answered = [e for e in ("z3", "enumeration", "algebra") if e in results and results[e].verdict in PROOFS]
    decider = answered[0] if answered else next(iter(results))
    if verdict == "refuted" and cx is None and z3_cx is not None:
        i, lanes = z3_cx
        cx = _counterexample(spec, a, i, sorted(lanes), int(counts[i]), int(ideals[i]))
    worst = int(counts.max()) if len(counts) and total is not None else None
    return AccessResult(
        name=acc.name,
        kind=acc.kind,
        instr=a.instr.name,
        vector=a.vector,
        instructions=instructions,
        wavefronts=total,
        ideal_wavefronts=int(ideals.sum()),
        max_wavefronts_per_instruction=worst,
        conflict_free=None if verdict not in ("proved", "refuted") else verdict == "proved",
        hardware_model=model_status(spec.arch, a.instr),
        engines=results,
        proof=Proof(verdict, decider, results[decider].seconds, results[decider].reason),
        counterexample=cx if verdict == "refuted" else None,
    )


PROOFS = ("proved", "refuted")


def agree(results: dict[str, EngineResult]) -> tuple[str, int | None]:
    """The verdict the engines agree on (``disagree`` when an engine says so, or their verdicts or
    totals differ; ``unknown`` when none answered) and their total when exactly one is given."""
    answered = [r for r in results.values() if r.verdict in PROOFS]
    totals = {r.wavefronts for r in answered if r.wavefronts is not None}
    total = next(iter(totals)) if len(totals) == 1 else None
    if any(r.verdict == "disagree" for r in results.values()) or len({r.verdict for r in answered}) > 1:
        return "disagree", total
    if len(totals) > 1:
        return "disagree", None
    return (answered[0].verdict if answered else "unknown"), total


def check_amd_access(
    spec: Spec, acc: AccessSpec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0
) -> AccessResult:
    """One access on an AMD arch, from the published LDS rules (``models/amd.py``): enumeration,
    Lemma 9.4 over the rule's lane groups, and Z3 (conflict-freedom; a proved access costs its
    ideal). Every answer is ``assumed (published)`` and names its rule."""
    where = f"spec: access[{spec.accesses.index(acc)}] ({acc.name})"
    try:
        a = amd.build(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr, spec.arch)
    except InputError as e:
        raise InputError(where, e.field, e.problem, e.value) from None
    r = a.rule
    n = len(a.addresses)
    results: dict[str, EngineResult] = {}
    cx = None
    if r.groups is None:
        results = {e: EngineResult(None, "unknown", reason=r.text) for e in engines}
        counts = ideals = np.zeros(n, dtype=np.int64)
    else:
        t0 = time.perf_counter()
        counts, ideals = amd.evaluate(r, a.addresses)
        if "enumeration" in engines:
            verdict = "proved" if (counts == ideals).all() else "refuted"
            secs = round(time.perf_counter() - t0, 4)
            results["enumeration"] = EngineResult(int(counts.sum()), verdict, secs)
        bad = np.flatnonzero(counts > ideals)
        if len(bad):
            i = int(bad[0])
            pair = amd.conflict_pair(r, a.addresses[i])
            lanes = pair["lanes"]
            cx = Counterexample(
                lanes=(lanes[0], lanes[1]), block=int(a.block[i]), warp=int(a.warp[i]), instruction=i,
                register=int(a.register[i]),
                coords=tuple(dict(zip(spec.dims, a.coords[i, lane].tolist())) for lane in lanes),
                byte_addresses=(int(a.addresses[i, lanes[0]]), int(a.addresses[i, lanes[1]])),
                bank=pair["bank"], phase=pair["group"], wavefronts=int(counts[i]), ideal=int(ideals[i]),
                reproducer=json.dumps({"arch": spec.arch, "instr": r.instr,
                                       "byte_offsets": a.addresses[i].tolist()}, separators=(",", ":")),
            )  # fmt: skip
        linear = isinstance(spec.memory, LinearLayout)
        mem = spec.memory.with_in_bases("block", []) if linear else None
        if "algebra" in engines:
            t0 = time.perf_counter()
            per, dirs, reason = amd.algebra(mem, acc.layout, spec.elem_bits, r, a.vector) if linear else (
                None, (), "the memory layout is not linear (padded)")  # fmt: skip
            space = Space.of(mem, spec.dims) if linear else None
            results["algebra"] = (
                EngineResult(None, "n/a", reason=reason)
                if per is None
                else EngineResult(per * n, "proved" if per == int(ideals[0]) else "refuted",
                                  round(time.perf_counter() - t0, 4), lemma="9.4",
                                  conflict_directions=tuple(space.name(v) for v in dirs))  # fmt: skip
            )
        if "z3" in engines:
            if not linear:
                results["z3"] = EngineResult(None, "n/a", reason="the memory layout is not linear (padded)")
            else:
                results["z3"] = _amd_z3(r, _amd_columns(acc, spec, a.vector), counts, ideals, timeout_s)
    verdict, total = agree(results)
    agreeing = [e for e in ("z3", "enumeration", "algebra") if e in results and results[e].verdict == verdict]
    decider = agreeing[0] if agreeing else next(iter(results))
    return AccessResult(
        name=acc.name,
        kind=acc.kind,
        instr=r.instr,
        vector=a.vector,
        instructions=n,
        wavefronts=total if verdict in ("proved", "refuted") else None,
        ideal_wavefronts=int(ideals.sum()),
        max_wavefronts_per_instruction=int(counts.max()) if n and verdict in ("proved", "refuted") else None,
        conflict_free=None if verdict not in ("proved", "refuted") else verdict == "proved",
        hardware_model=amd.STATUS,
        engines=results,
        proof=Proof(verdict, decider, results[decider].seconds, results[decider].reason),
        counterexample=cx if verdict == "refuted" else None,
        hardware_rule=r.text,
    )


def _amd_z3(r, cols: tuple, counts: np.ndarray, ideals: np.ndarray, timeout_s: float) -> EngineResult:
    """Z3 on an AMD access: conflict-freedom, and for a refuted one the exact words per bank
    (every group of a linear access costs the same, so one certificate gives the total)."""
    from bankproof.proofs import amd as amd_proofs

    ms = int(timeout_s * 1000)
    p = amd_proofs.conflict_free(r, *cols, r.width, ms)
    total = int(ideals.sum()) if p.status == "proved" else None
    verdict, reason, certificate = p.status, p.reason, None
    if p.status == "refuted" and len(counts):
        k = int(counts[0]) // int(ideals[0])
        cert = amd_proofs.exact_count(r, *cols, r.width, k, ms)
        certificate = Certificate(words_per_bank=k, status=cert.status, seconds=round(cert.seconds, 4))
        if cert.status == "proved":
            total = k * int(ideals.sum())
        elif cert.status == "refuted":
            verdict, reason = "disagree", cert.reason
    return EngineResult(total, verdict, round(p.seconds, 4), reason or None, certificate=certificate)


def _amd_columns(acc: AccessSpec, spec: Spec, vector: int) -> tuple[list[int], list[int], list[int]]:
    """Byte addresses of each free register bit (beyond the vector), lane bit and warp bit."""
    from bankproof.models.access import access_layout, element_offsets

    dist = access_layout(acc.layout, spec.memory).transpose_outs(spec.memory.out_dim_names)
    offsets = element_offsets(spec.memory)
    eb = spec.elem_bits // 8

    def col(b) -> int:
        return int(offsets[tuple(b)]) * eb

    regs = [b for b in dist.in_bases("register")][log2(vector) :]
    lanes, warps = [col(b) for b in dist.in_bases("lane")], [col(b) for b in dist.in_bases("warp")]
    return [col(b) for b in regs], lanes, warps


def combine(statuses: list[str]) -> str:
    """The verdict of several: disagree > refuted > unknown > proved."""
    for v in ("disagree", "refuted", "unknown"):
        if v in statuses:
            return v
    return "proved"


def verify(spec: Spec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> VerifyResult:
    """The report of ``bankproof verify``."""
    accesses = tuple(check_access(spec, acc, engines, timeout_s) for acc in spec.accesses)
    return VerifyResult(
        schema=1,
        spec=spec.path,
        arch=spec.arch,
        dtype=spec.dtype,
        shape=tuple(spec.shape),
        dims=tuple(spec.dims),
        memory=MemoryRef(spec.memory_notation, spec.memory_text, spec.warnings or None),
        verdict=combine([a.proof.status for a in accesses]),
        accesses=accesses,
    )
