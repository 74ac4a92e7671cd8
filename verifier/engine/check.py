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

import time
from dataclasses import replace

import numpy as np
from bankproof.models import lds, tally, target
from bankproof.models.access import MAX_ACCESS_BITS, WarpInstructions, access_layout, element_offsets
from bankproof.models.access_linear import LinearAccess, linear_access
from bankproof.models.errors import InputError, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.lemmas import lemma_9_4
from bankproof.models.space import Space
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.results import (
    AccessResult,
    Certificate,
    Counterexample,
    EngineResult,
    MemoryRef,
    Proof,
    UnreadResult,
    VerifyResult,
)

ENGINES = ("enumeration", "algebra", "z3")
ENGINE_NAMES = {  # what --engine (and the API's engines=) accept
    "enum": ("enumeration",),
    "algebra": ("algebra",),
    "z3": ("z3",),
    "all": ENGINES,
}


Access = WarpInstructions | LinearAccess  # enumerated, or held as bases


def _counterexample(
    spec: Spec, access: Access, index: int, lanes: list[int] | None, count: int, ideal: int
) -> Counterexample:
    """Instruction ``index``'s two colliding lanes (the lowest pair when ``lanes`` is None), with
    their coordinates, addresses, bank and phase (lane group), and the line that replays it."""
    ins = access.instr
    if isinstance(access, LinearAccess):  # only the two lanes' coordinates are built
        offs = access.addresses(index)
        warp, register, block = access.position(index)

        def coords(lane: int) -> tuple[int, ...]:
            return access.lane_coords(index, lane)
    else:
        offs = access.addresses[index]
        warp, register, block = (int(x[index]) for x in (access.warp, access.register, access.block))

        def coords(lane: int) -> tuple[int, ...]:
            return access.coords[index, lane].tolist()

    pair = (
        target.conflict(spec.arch, ins, offs)
        if lanes is None
        else target.pair(spec.arch, ins, offs, sorted(lanes))
    )
    l0, l1 = pair["lanes"]
    both = (int(offs[l0]), int(offs[l1]))
    return Counterexample(
        lanes=(l0, l1),
        block=block,
        warp=warp,
        instruction=index,
        register=register,
        coords=tuple(dict(zip(spec.dims, coords(lane))) for lane in (l0, l1)),
        byte_addresses=both,
        bank=pair["bank"],
        phase=pair["phase"],
        wavefronts=count,
        ideal=ideal,
        reproducer=target.reproducer(spec.arch, ins, offs),
        supplied=_supplied(spec, both) if ins.short.startswith(("ldsm", "stsm")) else None,
    )


def _supplied(spec: Spec, byte_addresses: tuple[int, int]) -> tuple[dict | None, ...]:
    """The tensor element at each byte address (``None`` where none starts there): what an
    ldmatrix/stmatrix lane's row address points at."""
    eb = spec.elem_bits // 8
    if isinstance(spec.memory, LinearLayout):  # the memory layout maps the offset to its element
        size = 1 << len(spec.memory.in_bases("offset"))
        return tuple(
            dict(zip(spec.dims, spec.memory.apply(offset=b // eb).values()))
            if b % eb == 0 and b // eb < size
            else None
            for b in byte_addresses
        )
    offsets = element_offsets(spec.memory) * eb
    out = []
    for b in byte_addresses:
        hit = np.argwhere(offsets == b)
        out.append(dict(zip(spec.dims, (int(x) for x in hit[0]))) if len(hit) else None)
    return tuple(out)


def _enumeration(
    spec: Spec, a: Access, c: tally.Tally, t0: float
) -> tuple[EngineResult, Counterexample | None]:
    """Every instruction counted (``c``, by the caller: one by one, from tables or bases)."""
    verdict = "unknown" if not c.known else "proved" if c.first_over is None else "refuted"
    result = EngineResult(
        wavefronts=c.total if c.known else None,
        verdict=verdict,
        seconds=round(time.perf_counter() - t0, 4),
        reason=c.reason,
    )
    cx = None
    if verdict == "refuted":
        cx = _counterexample(spec, a, c.first_over, None, *c.over)
    return result, cx


def _algebra_phases(spec: Spec, acc: AccessSpec, a: Access, c: tally.Tally) -> EngineResult:
    """Lemma 9.4 over the phases (``models/swizzle.py``)."""
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
        wavefronts=per * c.instructions,
        verdict="proved" if per == _phases(c) else "refuted",
        seconds=round(time.perf_counter() - t0, 4),
        lemma="9.4",
        conflict_directions=tuple(space.name(v) for v in lem.directions),
        note=None
        if lem.paper_applies
        else f"the paper's hypotheses fail ({lem.reason}); the count is this model's generalization",
    )


def _algebra_groups(spec: Spec, acc: AccessSpec, a: WarpInstructions, c: tally.Tally) -> EngineResult:
    """Lemma 9.4 over the lane groups (``models/lds.py``)."""
    t0 = time.perf_counter()
    if not isinstance(spec.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)")
    mem = spec.memory.with_in_bases("block", [])
    per, dirs, reason = lds.algebra(mem, acc.layout, spec.elem_bits, a.instr, a.vector)
    if per is None:
        return EngineResult(None, "n/a", reason=reason)
    space = Space.of(mem, spec.dims)
    return EngineResult(per * c.instructions, "proved" if per == _phases(c) else "refuted",
                        round(time.perf_counter() - t0, 4), lemma="9.4",
                        conflict_directions=tuple(space.name(v) for v in dirs))  # fmt: skip


def _phases(c: tally.Tally) -> int:
    return c.first[1]


def _z3_phases(
    spec: Spec, acc: AccessSpec, a: Access, c: tally.Tally, timeout_s: float
) -> tuple[EngineResult, list[int] | None]:
    """Z3 over the phase model's terms: conflict-freedom, then (linear memory) the exact words per
    bank, which gives the total (every phase alike)."""
    from bankproof.proofs.conflicts import conflict_free, exact_degree
    from bankproof.proofs.encode import symbolic_access

    ms = max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    linear = isinstance(spec.memory, LinearLayout)
    k = c.first[0] // c.first[1] if linear and c.instructions and c.first[1] else None
    sa = symbolic_access(acc.layout, spec.memory, spec.elem_bits, a.instr, a.vector)
    p = conflict_free(sa, ms)
    verdict, reason, wavefronts, certificate = (
        p.status,
        p.reason if p.status == "unknown" else None,
        None,
        None,
    )
    if k is not None and p.status != "unknown":
        cert = exact_degree(sa, k, ms)
        certificate = Certificate(
            words_per_bank=k,
            status=cert.status,
            seconds=round(cert.seconds, 4),
            witness_lanes=cert.model["lanes"] if cert.status == "proved" else None,
        )
        if cert.status == "proved":
            wavefronts = k * _phases(c) * c.instructions  # linear: every phase alike
        elif cert.status == "refuted":
            verdict, reason = "disagree", cert.reason
    out = EngineResult(wavefronts, verdict, round(p.seconds, 4), reason, certificate=certificate)
    return out, (p.model if p.status == "refuted" else None)


def _z3_groups(
    spec: Spec, acc: AccessSpec, a: WarpInstructions, c: tally.Tally, timeout_s: float
) -> tuple[EngineResult, dict | None]:
    """Z3 over lane groups: conflict-freedom, and for a refuted access the exact words per bank
    (every group of a linear access costs the same, so one certificate gives the total)."""
    from bankproof.proofs import lane_groups

    if not isinstance(spec.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)"), None
    r, ms = a.instr, max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    cols = _columns(acc, spec, a.vector)
    p = lane_groups.conflict_free(r, *cols, r.width, ms)
    total = c.ideal if p.status == "proved" else None
    verdict, reason, certificate = p.status, p.reason, None
    if p.status == "refuted" and c.instructions:
        k = c.first[0] // c.first[1]
        cert = lane_groups.exact_count(r, *cols, r.width, k, ms)
        certificate = Certificate(words_per_bank=k, status=cert.status, seconds=round(cert.seconds, 4))
        if cert.status == "proved":
            total = k * c.ideal
        elif cert.status == "refuted":
            verdict, reason = "disagree", cert.reason
    out = EngineResult(total, verdict, round(p.seconds, 4), reason or None, certificate=certificate)
    return out, (p.model if p.status == "refuted" else None)


def _columns(acc: AccessSpec, spec: Spec, vector: int) -> tuple[list[int], list[int], list[int]]:
    """Byte addresses of each free register bit (beyond the vector), lane bit and warp bit."""
    dist = access_layout(acc.layout, spec.memory).transpose_outs(spec.memory.out_dim_names)
    offsets = element_offsets(spec.memory)
    eb = spec.elem_bits // 8

    def col(b) -> int:
        return int(offsets[tuple(b)]) * eb

    regs = [b for b in dist.in_bases("register")][log2(vector) :]
    lanes, warps = [col(b) for b in dist.in_bases("lane")], [col(b) for b in dist.in_bases("warp")]
    return [col(b) for b in regs], lanes, warps


# The engines of each hardware model (a target names its model): a table, not a branch per vendor.
ALGEBRA = {"phases": _algebra_phases, "lane groups": _algebra_groups}
Z3 = {"phases": _z3_phases, "lane groups": _z3_groups}


def check_access(
    spec: Spec, acc: AccessSpec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0
) -> AccessResult:
    """Every engine's answer for one access of ``spec`` (its access enumerated once, through the
    arch's target, or held as bases on a linear memory layout), and the verdict they agree on."""
    t0 = time.perf_counter()
    a, c = _count(spec, acc, engines)
    results: dict[str, EngineResult] = {}
    cx = z3_model = None
    model = target.get(spec.arch).model
    if not c.known:  # no published lane groups, or paired wide loads off the measured archs:
        # the model cannot say, so no engine may answer (the algebra and Z3 encode the same model)
        results = {e: EngineResult(None, "unknown", reason=c.reason) for e in engines}
    else:
        if "enumeration" in engines and not _enumerable(a):
            why = f"2^{a.in_bits} points, over the 2^{MAX_ACCESS_BITS} it enumerates (others: bases)"
            results["enumeration"] = EngineResult(None, "unknown", reason=why)
        elif "enumeration" in engines:
            results["enumeration"], cx = _enumeration(spec, a, c, t0)
        if "algebra" in engines:
            results["algebra"] = ALGEBRA[model](spec, acc, a, c)
        if "z3" in engines:
            results["z3"], z3_model = Z3[model](spec, acc, a, c, timeout_s)
    verdict, total = agree(results)
    answered = [e for e in ("z3", "enumeration", "algebra") if e in results and results[e].verdict in PROOFS]
    decider = answered[0] if answered else next(iter(results))
    if verdict == "refuted" and cx is None and z3_model is not None:
        i = _instruction_of(a, z3_model)
        cx = _counterexample(spec, a, i, [z3_model["x"], z3_model["y"]], *_count_of(spec, a, c, i))
    n = c.instructions
    return AccessResult(
        name=acc.name,
        kind=acc.kind,
        instr=a.instr.name,
        vector=a.vector,
        instructions=n,
        wavefronts=total,
        ideal_wavefronts=c.ideal,
        max_wavefronts_per_instruction=c.worst if n and total is not None else None,
        conflict_free=None if verdict not in PROOFS else verdict == "proved",
        hardware_model=c.status,
        engines=results,
        proof=Proof(verdict, decider, results[decider].seconds, results[decider].reason),
        counterexample=cx if verdict == "refuted" else None,
        hardware_rule=c.rule,
    )


def _count(spec: Spec, acc: AccessSpec, engines: tuple[str, ...]) -> tuple[Access, tally.Tally]:
    """The access and its tally: on a phase-model target and a linear memory layout, from the bases
    (every instruction streamed through the model when enumeration is asked for, otherwise
    instruction 0 standing for all); elsewhere enumerated from tables."""
    t = target.get(spec.arch)
    try:
        la = None
        if t.counts_from_bases:
            la = linear_access(acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
        if la is not None:
            target.check_instr(t, la.instr)
            every = "enumeration" in engines and _enumerable(la)
            return la, (tally.streamed if every else tally.uniform)(spec.arch, la)
        a = target.build(spec.arch, acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    except InputError as e:  # name the access the problem is in
        if e.where != "access":
            raise
        where = f"spec: access[{spec.accesses.index(acc)}] ({acc.name})"
        raise type(e)(where, e.field, e.problem, e.value) from None  # an Untranslatable stays one
    return a, tally.of_count(target.count(spec.arch, a))


def _enumerable(a: Access) -> bool:
    return not isinstance(a, LinearAccess) or a.in_bits <= MAX_ACCESS_BITS


def _instruction_of(a: Access, m: dict) -> int:
    """The instruction a Z3 model names (its block, warp and register chunk)."""
    if isinstance(a, LinearAccess):
        nc, nw = len(a.chunks), len(a.warps)
        return m.get("reg", 0) | m.get("warp", 0) << nc | m.get("block", 0) << (nc + nw)
    hit = (a.block == m.get("block", 0)) & (a.warp == m.get("warp", 0))
    return int(np.flatnonzero(hit & (a.register == m.get("reg", 0) * a.vector))[0])


def _count_of(spec: Spec, a: Access, c: tally.Tally, i: int) -> tuple[int, int]:
    """Instruction ``i``'s count and ideal (every instruction of a linear access costs alike; an
    enumerated one counted alone)."""
    if isinstance(a, LinearAccess):
        return c.first
    one = target.count(spec.arch, replace(a, addresses=a.addresses[i : i + 1]))
    return int(one.counts[0]), int(one.ideals[0])


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


def combine(statuses: list[str]) -> str:
    """The verdict of several: disagree > refuted > unknown > proved."""
    for v in ("disagree", "refuted", "unknown"):
        if v in statuses:
            return v
    return "proved"


def verify(spec: Spec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> VerifyResult:
    """The report of ``bankproof verify``."""
    accesses = tuple(check_access(spec, acc, engines, timeout_s) for acc in spec.accesses)
    unread = tuple(UnreadResult(u.name, u.kind, u.reason) for u in spec.unread)
    return VerifyResult(
        schema=1,
        spec=spec.path,
        arch=spec.arch,
        dtype=spec.dtype,
        shape=tuple(spec.shape),
        dims=tuple(spec.dims),
        memory=MemoryRef(spec.memory_notation, spec.memory_text, spec.warnings or None),
        verdict=combine([a.proof.status for a in accesses] + ["unknown"] * len(unread)),
        accesses=accesses,
        unread=unread or None,
    )
