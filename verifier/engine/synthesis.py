"""Synthesis: the optimal memory layout for a problem's writer and reader (§5.4), verified by
every engine, with Z3's proof that no linear layout does better; and the construction's sets,
which :mod:`bankproof.verifier.render.explain` narrates.

>>> from bankproof.verifier.api.spec_file import load_spec
>>> import pathlib
>>> example = pathlib.Path(__file__).parents[2] / "examples" / "transpose_16x32_plain.toml"
>>> spec = load_spec(example, require_memory=False)
>>> r = synth(spec, engines=("enumeration",))
>>> r.synth.instructions
{'store': 'st128', 'read': 'ld32'}
>>> [a.wavefronts for a in r.accesses], r.synth.meets_lower_bound
([16, 16], True)
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from bankproof.models import lds, target
from bankproof.models.access import vector_cap
from bankproof.models.errors import InputError
from bankproof.models.hardware import instruction
from bankproof.models.lane_construction import lane_groups
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import memory_notations
from bankproof.models.space import Space
from bankproof.models.swizzle import Construction, optimal_swizzle, optimum_per_instruction, vectorization
from bankproof.verifier.engine.check import ENGINES, verify
from bankproof.verifier.engine.choice import pick_pair, search, universal_bound
from bankproof.verifier.engine.costs import access_bound, enumerated_cost, vector_instr
from bankproof.verifier.engine.matrices import memory_matrix
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.results import (
    SCHEMA,
    ExplainResult,
    Optimality,
    SmtSynthesis,
    StatusTime,
    SynthInfo,
    SynthResult,
    VerifyResult,
)

if TYPE_CHECKING:
    from bankproof.proofs.choices import Cheapest

CROSS_CHECK_MS = 150  # the SMT synthesis cross-check's time once the proof has settled optimality,
CROSS_CHECK_FULL_BITS = 12  # on tiles of more than 2^12 elements (smaller ones get the whole timeout)
ADOPT_ROUNDS = 4  # Z3's cheaper layouts taken in turn before the last one is proved or not


def construct(spec: Spec) -> tuple[Construction, AccessSpec, AccessSpec, float]:
    writer, reader = pick_pair(spec)
    t0 = time.perf_counter()
    groups = lane_groups(spec.arch)
    vec = _pinned_vector(spec, writer, reader) if groups else None
    s = optimal_swizzle(writer.layout, reader.layout, spec.elem_bits, writer.kind, reader.kind, spec.dims,
                        vec=vec, groups=groups)  # fmt: skip
    return s, writer, reader, time.perf_counter() - t0


def _pinned_vector(spec: Spec, writer: AccessSpec, reader: AccessSpec) -> list[int] | None:
    """On a lane-group target, the common vector cut to the narrowest ds_read/ds_write the spec
    pins (its lane groups are that instruction's, not the wider one's), or None (no cut needed)."""
    pins = [lds.INSTRS[a.instr] * 8 // spec.elem_bits for a in (writer, reader) if a.instr in lds.INSTRS]
    if not pins:
        return None
    space = Space.of(writer.layout, spec.dims)
    common = vectorization(writer.layout, reader.layout.transpose_outs(writer.layout.out_dim_names), space,
                           spec.elem_bits)  # fmt: skip
    n = min(max(0, p.bit_length() - 1) for p in pins)
    return common[:n] if n < len(common) else None


def optimality(
    spec: Spec, writer: AccessSpec, reader: AccessSpec, rep: VerifyResult, timeout_s: float
) -> tuple[Optimality, Cheapest]:
    """Z3 over every invertible linear layout and every instruction choice the spec leaves open
    (:mod:`bankproof.proofs.choices`): nothing is cheaper than the synthesized pair (UNSAT),
    and an SMT synthesis without §5.4 (SAT one wavefront above), cross-checked by enumeration.
    Also returns the proof query's answer (its cheaper layout when refuted)."""
    from bankproof.proofs.choices import prove_cheapest  # z3 only when used

    cost = rep.access(writer.name).wavefronts + rep.access(reader.name).wavefronts
    fixed = tuple(_fixed(a.instr) for a in (writer, reader))
    args = (writer.layout, reader.layout, spec.elem_bits, (writer.kind, reader.kind))
    ms = max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    proof = prove_cheapest(*args, cost, spec.arch, fixed, ms)
    # SAT: a layout at most as costly, found without §5.4: a check of the encoding, time-boxed on
    # large tiles once the proof has settled optimality (its timeout reads "unknown", no verdict)
    big = writer.layout.out_bits > CROSS_CHECK_FULL_BITS
    cross = min(ms, CROSS_CHECK_MS) if proof.status == "proved" and big else ms
    found = prove_cheapest(*args, cost + 1, spec.arch, fixed, cross)
    enumerated = agrees = offset = None
    status = {"refuted": "found", "proved": "impossible"}.get(found.status, found.status)
    if found.layout is not None:
        sides = [(a.layout, a.kind, ins) for a, ins in zip((writer, reader), found.instructions, strict=True)]
        enumerated = enumerated_cost(sides, found.layout, spec.elem_bits)
        agrees = enumerated == found.modeled and (proof.status != "proved" or enumerated >= cost)
        offset = found.layout.as_dict()["offset"]
    reason = proof.reason or None
    if proof.status == "refuted":
        reason = f"Z3 found {proof.modeled} wavefronts with {' + '.join(proof.instructions)}"
    return Optimality(
        cost=cost,
        proof=StatusTime(proof.status, round(proof.seconds, 4), reason),
        smt_synthesis=SmtSynthesis(
            status, round(found.seconds, 4), found.reason or None, enumerated, agrees, offset
        ),
    ), proof


def _verified(
    spec: Spec, memory: LinearLayout, chosen: dict[str, str], engines, timeout_s: float
) -> tuple[VerifyResult, dict[str, str]]:
    """The spec's accesses verified on ``memory``, with the instructions ``chosen`` for them, and
    ``memory`` in every notation that says it."""
    notations = memory_notations(memory, spec.dims)
    accesses = [replace(a, instr=chosen[a.name]) if a.name in chosen else a for a in spec.accesses]
    text = notations.get("formula", notations["bases"])
    synth_spec = replace(
        spec, memory=memory, memory_notation="synthesized", memory_text=text, accesses=accesses
    )
    return verify(synth_spec, engines, timeout_s), notations


def _adopt(spec: Spec, writer: AccessSpec, reader: AccessSpec, proof: Cheapest, chosen: dict[str, str],
           engines, timeout_s: float) -> tuple | None:  # fmt: skip
    """Z3's cheaper layout and instructions, verified by the engines: ``(memory, chosen, report,
    notations, total)``, or None when the count verified is not the one Z3 modeled."""
    picked = dict(chosen)
    for a, ins in zip((writer, reader), proof.instructions or (), strict=True):
        if a.instr == "auto" and ins != "auto":
            picked[a.name] = ins
    rep, notations = _verified(spec, proof.layout, picked, engines, timeout_s)
    counted = [rep.access(a.name).wavefronts for a in (writer, reader)]
    if None in counted or sum(counted) != proof.modeled or rep.verdict == "disagree":
        return None
    return proof.layout, picked, rep, notations, sum(counted)


def _vector(kind: str, bits: int, lane_groups: bool) -> str:
    """The ld/st (or, on a lane-group target, ds_read/ds_write) of ``bits`` per lane."""
    if lane_groups:
        return f"ds_{'read' if kind == 'load' else 'write'}_b{bits}"
    return vector_instr(kind, bits)


def _fixed(instr: str) -> str:
    """An access's instruction for the Z3 search: ``auto`` (free), ``ld/st`` (a CuTe
    auto-vectorizing copy: any ld/st width, a superset of the widest one it takes) or pinned."""
    return "ld/st" if instr.startswith("vector") else "auto" if instr == "auto" else instruction(instr).short


def synth(spec: Spec, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0) -> SynthResult:
    """The §5.4 layout for ``spec``'s writer and reader, verified, with its optimality proof
    (``z3`` among ``engines``) and the Lemma 9.5 bound it meets."""
    if not spec.accesses:
        raise InputError("spec", "access", "must list the layouts to synthesize for")
    s, writer, reader, seconds = construct(spec)
    # Verify with the vector width the construction optimized for (``auto`` could differ).
    width = (1 << len(s.vec)) * spec.elem_bits
    groups = lane_groups(spec.arch) is not None  # lane groups: the construction alone, not searched
    chosen = {a.name: _vector(a.kind, width, groups) for a in (writer, reader) if a.instr == "auto"}
    bound = universal_bound(spec)
    ranked = search(spec, exhaustive=True) if not groups else []
    base = next((c for c in ranked if list(c.vector) == s.vec and c.construction.layout == s.layout), None)
    searched = bool(ranked) and (base is None or ranked[0].key < base.key)
    pick = ranked[0] if searched else base  # another vector and instructions beat §5.4's common vector
    if pick is not None:
        s = pick.construction
        chosen = {a.name: ins for a, ins in zip((writer, reader), pick.instructions, strict=True)
                  if a.instr == "auto"}  # an instruction the spec pins (a cp.async copy) stays  # fmt: skip
    memory = s.layout
    rep, notations = _verified(spec, memory, chosen, engines, timeout_s)
    counted = [a.wavefronts for a in rep.accesses if a.name in (writer.name, reader.name)]
    total = None if None in counted else sum(counted)  # None: a time limit, or a model that cannot say
    verdict, opt, family = rep.verdict, None, None
    if "z3" in engines and verdict != "disagree" and ranked and total is not None:
        opt, proof = optimality(spec, writer, reader, rep, timeout_s)
        for _ in range(ADOPT_ROUNDS):  # Z3 found a cheaper layout: take it, verified, and prove again
            if opt.proof.status != "refuted" or opt.smt_synthesis.agrees is False:
                break
            better = _adopt(spec, writer, reader, proof, chosen, engines, timeout_s)
            if better is None:  # enumeration does not confirm Z3's count: an encoding to report
                break
            family = total if family is None else family
            memory, chosen, rep, notations, total = better
            opt, proof = optimality(spec, writer, reader, rep, timeout_s)
        verdict = rep.verdict
        if opt.proof.status == "refuted" or opt.smt_synthesis.agrees is False:
            verdict = "disagree"
    opt_w, opt_r = optimum_per_instruction(s)
    bounds = {}
    for a, lemma in ((writer, opt_w), (reader, opt_r)):
        got = rep.access(a.name)
        per = got.ideal // max(1, got.instructions)  # no layout beats the phases
        matrix = not groups and instruction(got.instr).is_matrix
        same = family is None and got.vector == 1 << len(s.vec) and not matrix
        bounds[a.name] = max(per, lemma) if same else per  # Lemma 9.5 counts this vectorization only
    checked = tuple(
        replace(a, lower_bound_wavefronts=bounds[a.name] * a.instructions) if a.name in bounds else a
        for a in rep.accesses
    )
    met = all(a.wavefronts == a.lower_bound_wavefronts for a in checked if a.name in bounds)
    cycle = target.get(spec.arch).banks * 4 if groups else None  # bytes a lane group's cycle serves
    pinned_met = groups and total is not None and all(
        rep.access(x.name).wavefronts == (rep.access(x.name).ideal if x.instr != "auto"
                                          else access_bound(x.layout, spec.elem_bits, cycle))
        for x in (writer, reader))  # fmt: skip
    over = _optimal_over(total, bound, opt, writer, reader, bool(ranked), cycle, pinned_met)
    if family is not None:
        over += f"; the layout is Z3's (the §5.4 construction and instruction search found {family})"
    info = SynthInfo(
        writer=writer.name,
        reader=reader.name,
        seconds=round(seconds, 4),
        vector_elements=1 << len(s.vec) if family is None else rep.access(reader.name).vector,
        memory={"offset": memory.as_dict()["offset"], "notations": notations},
        lower_bound_per_instruction=bounds,
        conflict_free=s.conflict_free
        if family is None
        else all(rep.access(a.name).conflict_free for a in (writer, reader)),  # fmt: skip
        meets_lower_bound=met,
        optimality=opt,
        instructions={a.name: a.instr for a in rep.accesses if a.name in (writer.name, reader.name)},
        universal_bound=bound,
        optimal_over=over,
        runners_up=_runners_up(ranked, s.space),
    )
    fields = {k: getattr(rep, k) for k in ("schema", "spec", "arch", "dtype", "shape", "dims", "memory")}
    return SynthResult(**fields, verdict=verdict, accesses=checked, synth=info, layout=memory)


def _optimal_over(
    total: int | None,
    bound: int | None,
    opt: Optimality | None,
    writer,
    reader,
    searched: bool,
    cycle: int | None = None,
    pinned_met: bool = False,
) -> str:
    """The family the result is optimal over, as proved (or the honest restriction); ``cycle``:
    on a lane-group target, the bytes one cycle serves at most (banks x 4)."""
    if total is None:
        return "unknown: the synthesized layout's wavefronts are not known (see each access's proof)"
    pinned = [f"{a.name}'s {_pinned(a.instr)}" for a in (writer, reader) if a.instr != "auto"]
    fixed = f", with {' and '.join(pinned)} as the spec fixes" if pinned else ""
    if total == bound:
        met = f"bytes moved / {cycle} per cycle" if cycle else "bytes moved / 128 per wavefront"
        return f"every memory layout and instruction choice{fixed} (proved: {met} is met)"
    if cycle and pinned_met:  # a pinned side at its instruction's ideal: one cycle per lane group
        return (
            f"every memory layout{fixed} (proved: each pinned side at its instruction's ideal of one "
            f"cycle per lane group, each free side at bytes / {cycle} per cycle)"
        )
    if cycle:
        return (f"restricted: the §5.4 construction over the published lane groups, its vector and "
                f"instructions (above the bytes / {cycle} per cycle bound; no instruction search or Z3 "
                "optimality proof on lane-group targets yet)")  # fmt: skip
    if not searched:
        return "restricted: one access, its own instruction; not proved beyond the bytes / 128 bound"
    if opt is not None and opt.proof.status == "proved":
        return (
            f"every invertible linear layout and every ld/st width and ldmatrix/stmatrix form per access"
            f"{fixed} (proved by Z3; padded layouts not covered)"
        )
    why = opt.proof.reason if opt is not None and opt.proof.reason else "Z3 not run"
    return f"restricted: the searched vectors and instructions, cheapest found{fixed} (not proved: {why})"


def _pinned(instr: str) -> str:
    if instr.startswith("vector"):
        return f"widest ld/st up to {vector_cap(instr) * 8} bits (CuTe's auto-vectorizing copy)"
    return instr


def _runners_up(ranked: list, space, n: int = 5) -> tuple[dict, ...] | None:
    """The next distinct (vector, instructions, cost) choices after the chosen one."""
    out: list[dict] = []
    for c in ranked[1:]:
        row = {"vector": [space.name(v) for v in c.vector], "instructions": list(c.instructions),
               "wavefronts": list(c.wavefronts)}  # fmt: skip
        if row not in out:
            out.append(row)
        if len(out) == n:
            break
    return tuple(out) or None


def explain(spec: Spec, synthesized: tuple | None = None) -> ExplainResult:
    """The §5.4 construction's sets for ``spec``'s writer and reader, bits named after the dims
    (``synthesized``: what :func:`construct` returned for this spec, when the caller has it)."""
    if not spec.accesses:
        raise InputError("spec", "access", "must list the layouts to explain")
    s, writer, reader, _ = synthesized or construct(spec)
    sp = s.space

    def names(vs) -> tuple[str, ...]:
        return tuple(sp.name(v) for v in vs)

    lay_w = writer.layout.transpose_outs(s.layout.out_dim_names)
    lay_r = reader.layout.transpose_outs(s.layout.out_dim_names)

    def regs(lay: LinearLayout) -> tuple[str, ...]:
        return names(sp.pack_row_major(x) for x in lay.in_bases("register") if any(x))

    lo, hi = optimum_per_instruction(s)
    notations = memory_notations(s.layout, spec.dims)
    v = len(s.vec)
    roles = [("vector", v), ("bank", len(s.bank)), ("segment", len(s.idx))]
    return ExplainResult(
        schema=SCHEMA,
        spec=spec.path,
        writer=writer.name,
        reader=reader.name,
        bits=tuple(sp.names),
        vectorization=names(s.vec),
        bank_bits=s.b,
        segment_bits=s.ell,
        sets={
            "A_Reg": regs(lay_w),
            "A_Thr": names(s.a_thr),
            "B_Reg": regs(lay_r),
            "B_Thr": names(s.b_thr),
            "split_A": names(s.split_a),
            "split_B": names(s.split_b),
            "A_Bank": names(s.a_bank),
            "B_Bank": names(s.b_bank),
            "sub_word": names(s.sub),
            "I": names(s.inter),
            "E": names(s.e),
            "F": names(s.f),
            "H": names(s.h),
            "C": names(s.c),
            "padding": names(s.padding),
            "S_Idx": names(s.idx),
            "S_Bank": names(s.bank),
        },  # fmt: skip
        conflict_free=s.conflict_free,
        wavefronts_per_instruction={"A": lo, "B": hi},
        formula=notations.get("formula"),
        notations=notations,
        swizzle=s,
        problem=spec,
        writer_kind=writer.kind,
        reader_kind=reader.kind,
        matrix=memory_matrix(s.layout, spec.dims, spec.elem_bits, roles),
    )
