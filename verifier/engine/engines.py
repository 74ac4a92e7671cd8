"""The three engines on one access problem: enumeration (every warp instruction through the
target's hardware model: its verdicts are proofs), the algebra (Lemma 9.4 over the phases or the lane
groups) and Z3 (conflict-freedom and the exact words per bank). Each takes the problem, the access
as built (enumerated, or held as bases) and its tally; :func:`~bankproof.verifier.engine.answer.answer`
runs them and builds the answer.

>>> sorted(ALGEBRA) == sorted(Z3) == ["lane groups", "phases"]
True
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from bankproof.models import lds, tally, target
from bankproof.models.access import MAX_ACCESS_BITS, WarpInstructions, access_layout, element_offsets
from bankproof.models.access_linear import LinearAccess
from bankproof.models.errors import log2
from bankproof.models.layout import LinearLayout
from bankproof.models.lemmas import lemma_9_4
from bankproof.models.space import Space
from bankproof.verifier.engine.problem import AccessProblem
from bankproof.verifier.results import Certificate, Conflict, EngineResult, FrozenMap

ENGINES = ("enumeration", "algebra", "z3")
ENGINE_NAMES = {  # what --engine (and the API's engines=) accept
    "enum": ("enumeration",),
    "algebra": ("algebra",),
    "z3": ("z3",),
    "all": ENGINES,
}


Access = WarpInstructions | LinearAccess  # enumerated, or held as bases


def conflict_of(
    p: AccessProblem, access: Access, index: int, lanes: list[int] | None, count: int, ideal: int
) -> Conflict:
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
        target.conflict(p.arch, ins, offs) if lanes is None else target.pair(p.arch, ins, offs, sorted(lanes))
    )
    l0, l1 = pair["lanes"]
    both = (int(offs[l0]), int(offs[l1]))
    return Conflict(
        lanes=(l0, l1),
        warp=warp,
        byte_addresses=both,
        bank=pair["bank"],
        phase=pair["phase"],
        wavefronts=count,
        ideal=ideal,
        reproduce=f"echo '{target.reproducer(p.arch, ins, offs)}' | bankproof wavefronts --input -",
        instruction=index,
        block=block,
        register=register,
        coords=tuple(FrozenMap(zip(p.dims, coords(lane))) for lane in (l0, l1)),
        supplied=_supplied(p, both) if ins.short.startswith(("ldsm", "stsm")) else None,
    )


def _supplied(p: AccessProblem, byte_addresses: tuple[int, int]) -> tuple[dict | None, ...]:
    """The tensor element at each byte address (``None`` where none starts there): what an
    ldmatrix/stmatrix lane's row address points at."""
    eb = p.elem_bits // 8
    if isinstance(p.memory, LinearLayout):  # the memory layout maps the offset to its element
        size = 1 << len(p.memory.in_bases("offset"))
        return tuple(
            FrozenMap(zip(p.dims, p.memory.apply(offset=b // eb).values()))
            if b % eb == 0 and b // eb < size
            else None
            for b in byte_addresses
        )
    offsets = element_offsets(p.memory) * eb
    out = []
    for b in byte_addresses:
        hit = np.argwhere(offsets == b)
        out.append(FrozenMap(zip(p.dims, (int(x) for x in hit[0]))) if len(hit) else None)
    return tuple(out)


def enumeration(
    p: AccessProblem, a: Access, c: tally.Tally, t0: float
) -> tuple[EngineResult, Conflict | None]:
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
        cx = conflict_of(p, a, c.first_over, None, *c.over)
    return result, cx


def _algebra_phases(p: AccessProblem, a: Access, c: tally.Tally) -> EngineResult:
    """Lemma 9.4 over the phases (``models/swizzle.py``)."""
    t0 = time.perf_counter()
    if not isinstance(p.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)")
    lem = lemma_9_4(p.memory.with_in_bases("block", []), p.layout, p.elem_bits, p.kind, log2(a.vector))
    if not lem.applies:
        return EngineResult(None, "n/a", reason=lem.reason)
    per = lem.wavefronts_per_instruction
    space = Space.of(p.memory, p.dims)
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


def _algebra_groups(p: AccessProblem, a: WarpInstructions, c: tally.Tally) -> EngineResult:
    """Lemma 9.4 over the lane groups (``models/lds.py``)."""
    t0 = time.perf_counter()
    if not isinstance(p.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)")
    mem = p.memory.with_in_bases("block", [])
    per, dirs, reason = lds.algebra(mem, p.layout, p.elem_bits, a.instr, a.vector)
    if per is None:
        return EngineResult(None, "n/a", reason=reason)
    space = Space.of(mem, p.dims)
    return EngineResult(per * c.instructions, "proved" if per == _phases(c) else "refuted",
                        round(time.perf_counter() - t0, 4), lemma="9.4",
                        conflict_directions=tuple(space.name(v) for v in dirs))  # fmt: skip


def _phases(c: tally.Tally) -> int:
    return c.first[1]


def _z3_phases(
    p: AccessProblem, a: Access, c: tally.Tally, timeout_s: float
) -> tuple[EngineResult, list[int] | None]:
    """Z3 over the phase model's terms: conflict-freedom, then (linear memory) the exact words per
    bank, which gives the total (every phase alike)."""
    from bankproof.proofs.conflicts import conflict_free, exact_degree
    from bankproof.proofs.encode import symbolic_access

    ms = max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    linear = isinstance(p.memory, LinearLayout)
    k = c.first[0] // c.first[1] if linear and c.instructions and c.first[1] else None
    sa = symbolic_access(p.layout, p.memory, p.elem_bits, a.instr, a.vector)
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
    p: AccessProblem, a: WarpInstructions, c: tally.Tally, timeout_s: float
) -> tuple[EngineResult, dict | None]:
    """Z3 over lane groups: conflict-freedom, and for a refuted access the exact words per bank
    (every group of a linear access costs the same, so one certificate gives the total)."""
    from bankproof.proofs import lane_groups

    if not isinstance(p.memory, LinearLayout):
        return EngineResult(None, "n/a", reason="the memory layout is not linear (padded)"), None
    r, ms = a.instr, max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    cols = _columns(p, a.vector)
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


def _columns(p: AccessProblem, vector: int) -> tuple[list[int], list[int], list[int]]:
    """Byte addresses of each free register bit (beyond the vector), lane bit and warp bit."""
    dist = access_layout(p.layout, p.memory).transpose_outs(p.memory.out_dim_names)
    offsets = element_offsets(p.memory)
    eb = p.elem_bits // 8

    def col(b) -> int:
        return int(offsets[tuple(b)]) * eb

    regs = [b for b in dist.in_bases("register")][log2(vector) :]
    lanes, warps = [col(b) for b in dist.in_bases("lane")], [col(b) for b in dist.in_bases("warp")]
    return [col(b) for b in regs], lanes, warps


# The engines of each hardware model (a target names its model): a table, not a branch per vendor.
ALGEBRA = {"phases": _algebra_phases, "lane groups": _algebra_groups}
Z3 = {"phases": _z3_phases, "lane groups": _z3_groups}


def enumerable(a: Access) -> bool:
    return not isinstance(a, LinearAccess) or a.in_bits <= MAX_ACCESS_BITS


def instruction_of(a: Access, m: dict) -> int:
    """The instruction a Z3 model names (its block, warp and register chunk)."""
    if isinstance(a, LinearAccess):
        nc, nw = len(a.chunks), len(a.warps)
        return m.get("reg", 0) | m.get("warp", 0) << nc | m.get("block", 0) << (nc + nw)
    hit = (a.block == m.get("block", 0)) & (a.warp == m.get("warp", 0))
    return int(np.flatnonzero(hit & (a.register == m.get("reg", 0) * a.vector))[0])


def count_of(p: AccessProblem, a: Access, c: tally.Tally, i: int) -> tuple[int, int]:
    """Instruction ``i``'s count and ideal (every instruction of a linear access costs alike; an
    enumerated one counted alone)."""
    if isinstance(a, LinearAccess):
        return c.first
    one = target.count(p.arch, replace(a, addresses=a.addresses[i : i + 1]))
    return int(one.counts[0]), int(one.ideals[0])
