"""One access, one answer: the question every reader ends in (:class:`AccessProblem`: one warp-level
shared-memory access through a memory layout) answered by :func:`answer`, the one function that
counts it and runs the engines asked for. ``verify`` (spec files, Python values), ``triton scan``,
the workbench and the kernel's second engine build a problem and embed the
:class:`~bankproof.verifier.results.answer.AccessAnswer` it returns; none counts or proves by itself.

>>> from bankproof.models.layout import LinearLayout
>>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]], "warp": []},
...                               {"dim0": 32})
>>> mem = LinearLayout.identity1d(32, "offset", "dim0")
>>> a = answer(AccessProblem(arch="sm90", memory=mem, layout=lay, elem_bits=32, kind="store"))
>>> a.instr, a.wavefronts, a.ideal, a.verdict, sorted(a.engines)
('st32', 1, 1, 'proved', ['algebra', 'enumeration', 'z3'])
>>> dict(answer(AccessProblem(arch="sm90", memory=mem, layout=lay, elem_bits=32, kind="store"), ()).engines)
{}
"""

from __future__ import annotations

import time

import numpy as np
from bankproof.models import tally, target
from bankproof.models.access import MAX_ACCESS_BITS, WarpInstructions, access_layout
from bankproof.models.access_linear import linear_access
from bankproof.models.errors import InputError
from bankproof.verifier.engine import engines as run
from bankproof.verifier.engine.engines import ENGINES, Access, enumerable
from bankproof.verifier.engine.problem import AccessProblem
from bankproof.verifier.results import AccessAnswer, Conflict, EngineResult, FrozenMap, Proof

PROOFS = ("proved", "refuted")


def answer(p: AccessProblem, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> AccessAnswer:
    """The access counted once (through the arch's target: enumerated, or held as bases on a linear
    memory layout) and every engine in ``engines`` run on it; the verdict they agree on. With no
    engine asked for, the count alone answers (its verdict the enumeration's)."""
    t0 = time.perf_counter()
    a, c = _count(p, engines)
    results: dict[str, EngineResult] = {}
    cx = z3_model = None
    model = target.get(p.arch).model
    if not c.known:  # no published lane groups, or paired wide loads off the measured archs:
        # the model cannot say, so no engine may answer (the algebra and Z3 encode the same model)
        results = {e: EngineResult(None, "unknown", reason=c.reason) for e in engines}
    else:
        if "enumeration" in engines and not enumerable(a):
            why = f"2^{a.in_bits} points, over the 2^{MAX_ACCESS_BITS} it enumerates (others: bases)"
            results["enumeration"] = EngineResult(None, "unknown", reason=why)
        elif "enumeration" in engines or not engines:
            results["enumeration"], cx = run.enumeration(p, a, c, t0)
        if "algebra" in engines:
            results["algebra"] = run.ALGEBRA[model](p, a, c)
        if "z3" in engines:
            results["z3"], z3_model = run.Z3[model](p, a, c, timeout_s)
    if not results:
        results = {"enumeration": EngineResult(None, "unknown", reason=c.reason)}
    verdict, total = agree(results)
    answered = [e for e in ("z3", "enumeration", "algebra") if e in results and results[e].verdict in PROOFS]
    decider = answered[0] if answered else next(iter(results))
    if verdict == "refuted" and cx is None and z3_model is not None:
        i = run.instruction_of(a, z3_model)
        cx = run.conflict_of(p, a, i, [z3_model["x"], z3_model["y"]], *run.count_of(p, a, c, i))
    n = c.instructions
    seconds = results[decider].seconds if engines else None  # counted only: no engine's time to give
    proof = Proof(verdict, decider, seconds, results[decider].reason)
    return AccessAnswer(
        instr=getattr(a.instr, "short", a.instr.name),
        vector=a.vector,
        instructions=n,
        wavefronts=total,
        ideal=c.ideal,
        max_per_instruction=c.worst if n and total is not None else None,
        conflict_free=None if verdict not in PROOFS else verdict == "proved",
        verdict=verdict,
        reason=proof.reason,
        rests_on=c.status,
        rule=c.rule,
        engines=FrozenMap(results if engines else {}),
        proof=proof,
        conflict=cx if verdict == "refuted" else None,
    )


def enumerated(
    instr: str,
    instructions: int | None,
    wavefronts: int | None,
    ideal: int | None,
    max_per_instruction: int | None,
    verdict: str,
    rests_on: str,
    reason: str | None = None,
    conflict: Conflict | None = None,
) -> AccessAnswer:
    """The answer for an access given as address tables (a kernel's dynamic instances, counted by
    :mod:`~bankproof.verifier.engine.tables`): the enumeration decided it where it is decided;
    conflict-free where proved, not where two lanes collide.

    >>> a = enumerated("ld32", 4, 8, 4, 2, "refuted", "measured")
    >>> a.conflict_free, a.proof.engine
    (None, 'enumeration')
    """
    decided = verdict in PROOFS
    return AccessAnswer(
        instr=instr,
        vector=None,
        instructions=instructions,
        wavefronts=wavefronts,
        ideal=ideal,
        max_per_instruction=max_per_instruction,
        conflict_free=True if verdict == "proved" else (False if conflict is not None else None),
        verdict=verdict,
        reason=reason,
        rests_on=rests_on,
        rule=None,
        engines=FrozenMap(),
        proof=Proof(verdict, "enumeration", None, None if decided else reason),
        conflict=conflict,
    )


def choose(p: AccessProblem) -> str:
    """The instruction ``p.instr`` names: the first of its list the layout pair delivers."""
    names = [n.strip() for n in p.instr.split(",")]
    if len(names) == 1:
        return names[0]
    for i, name in enumerate(names):
        try:
            target.build(p.arch, p.layout, p.memory, p.elem_bits, p.kind, name)
            return name
        except (InputError, ValueError):
            if i == len(names) - 1:
                raise
    raise InputError(p.where or "access", "instr", "names no instruction", p.instr)


def issuers(p: AccessProblem, a: WarpInstructions) -> np.ndarray:
    """Per warp instruction, the lanes that issue when ``free_lanes_off``: those whose lane, warp,
    block and register carry none of the layout's free bits (:meth:`LinearLayout.free_masks`).

    >>> from bankproof.models.layout import LinearLayout
    >>> mem = LinearLayout.identity1d(32, "offset", "dim0")
    >>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]],
    ...                                "warp": [[0], [0]]}, {"dim0": 32})
    >>> p = AccessProblem(memory=mem, layout=lay, elem_bits=32, kind="store", free_lanes_off=True)
    >>> issuers(p, target.build("sm90", lay, mem, 32, "store", "cp4.ca")).any(axis=1).tolist()
    [True, False, False, False]
    """
    free = access_layout(p.layout, p.memory).free_masks()
    lanes = np.arange(32) & free.get("lane", 0)
    rows = a.warp & free.get("warp", 0) | a.block & free.get("block", 0)
    rows |= a.register & free.get("register", 0)
    return (rows[:, None] == 0) & (lanes[None, :] == 0)


def issued(p: AccessProblem) -> tuple[int, bool]:
    """The warp instructions with a lane on when ``p.free_lanes_off``, and whether every lane of
    every instruction is on (then the lanes off change nothing)."""
    a = target.build(p.arch, p.layout, p.memory, p.elem_bits, p.kind, choose(p))
    on = issuers(p, a)
    return int(on.any(axis=1).sum()), bool(on.all())


def _count(p: AccessProblem, engines: tuple[str, ...]) -> tuple[Access, tally.Tally]:
    """The access and its tally: on a phase-model target and a linear memory layout, from the bases
    (every instruction streamed through the model when enumeration is asked for, otherwise
    instruction 0 standing for all); elsewhere enumerated from tables."""
    t = target.get(p.arch)
    try:
        instr = choose(p)
        la = None
        if t.counts_from_bases and not p.free_lanes_off:
            la = linear_access(p.layout, p.memory, p.elem_bits, p.kind, instr)
        if la is not None:
            target.check_instr(t, la.instr)
            every = ("enumeration" in engines or not engines) and enumerable(la)
            return la, (tally.streamed if every else tally.uniform)(p.arch, la)
        a = target.build(p.arch, p.layout, p.memory, p.elem_bits, p.kind, instr)
    except InputError as e:  # name the access the problem is in
        if e.where != "access" or p.where is None:
            raise
        raise type(e)(p.where, e.field, e.problem, e.value) from None  # an Untranslatable stays one
    active = issuers(p, a) if p.free_lanes_off else None
    return a, tally.of_count(target.count(p.arch, a, active))


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


__all__ = ["AccessProblem", "agree", "answer", "choose", "combine", "enumerated", "issued", "issuers"]
