"""The kernel pipeline's one analysis: a kernel read once (:class:`KernelSource`), one CTA run by
the PTX machine, every instance counted, and the account returned as frozen records
(:class:`~bankproof.verifier.kernel.records.KernelResult`).

>>> src = source_from_ptx('''
... .visible .entry k()
... {
...   .shared .align 4 .b8 buf[4224];
...   mov.u32 %r1, %tid.x;
...   mul.lo.s32 %r2, %r1, 132;
...   mov.u32 %r3, buf;
...   add.s32 %r4, %r3, %r2;
...   .loc 1 9 3
...   st.shared.u32 [%r4], %r1;
...   shl.b32 %r5, %r1, 7;
...   add.s32 %r6, %r3, %r5;
...   .loc 1 10 3
...   ld.shared.u32 %r7, [%r6];
... }
... .file 1 "t.cu"''', "t.ptx")
>>> r = analyse(src, Launch(block=(32, 1, 1)))
>>> [(i.location.line, i.instr, i.wavefronts, i.ideal, i.verdict) for i in r.instructions]
[(9, 'st32', 1, 1, 'proved'), (10, 'ld32', 32, 1, 'refuted')]
>>> r.instructions[1].conflict.lanes, r.verdict
((0, 1), 'refuted')
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from bankproof.models import atomic_rule, target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.hardware import instruction
from bankproof.verifier.engine import tables
from bankproof.verifier.engine.answer import enumerated
from bankproof.verifier.kernel import costs, crosscheck, fixes, ptxas, reconcile, sass_effects, simt
from bankproof.verifier.kernel.functions import with_functions
from bankproof.verifier.kernel.records import (
    InstructionReport,
    KernelResult,
    Launch,
    SourceLine,
    Trace,
)
from bankproof.verifier.kernel.sites import COUNTED, UNMODELLED, shared_pointers
from bankproof.verifier.kernel.totals import kind_totals, line_totals
from bankproof.verifier.ptx.module import KernelCode, Loc, Op, PtxModule, kernel_code, read_module
from bankproof.verifier.ptx.opcodes import unknown_opcodes
from bankproof.verifier.results import SCHEMA


@dataclass(frozen=True)
class KernelSource:
    """A kernel read once: where it came from (``origin``: ``cuda`` compiled here, or ``ptx``), its
    module and the chosen kernel's code."""

    name: str
    origin: str
    module: PtxModule
    code: KernelCode


def source_from_ptx(ptx: str, name: str, kernel: str | None = None, origin: str = "ptx") -> KernelSource:
    """A :class:`KernelSource` from PTX text (any compiler's)."""
    module = read_module(ptx)
    return KernelSource(name, origin, module, with_functions(module, kernel_code(module, kernel)))


def _loc(loc: Loc | None) -> SourceLine | None:
    return None if loc is None else SourceLine(loc.file, loc.line, loc.column)


RUN_SHARE = 0.4  # of a time limit, the machine's; the rest is for counting what it ran
SASS_SHARE = 0.3  # of a time limit, for building and reading the SASS


def analyse(
    src: KernelSource,
    launch: Launch,
    arch: str = DEFAULT_ARCH,
    max_steps: int = simt.MAX_STEPS,
    max_seconds: float = simt.MAX_SECONDS,
    keep_trace: bool = False,
    second_engine: bool = True,
    engines: tuple[str, ...] = ("enumeration", "algebra", "z3"),
):
    """The account of one CTA of ``launch`` (see the module docstring), as a list of passes over
    the kernel read once (``src``): evaluate (run the CTA), read what runs (the SASS), count every
    instance, prove each instruction's layout, fix the conflicting buffers, report. With
    ``keep_trace``, the machine's trace beside it (the API checks TMA boxes and descriptors on it);
    without ``second_engine``, the counts alone (no proof per instruction, no fix searched: the
    Triton ledger's use); ``engines``: those the proof pass runs on an instruction's layout (the
    algebra, Z3; with neither, the enumeration alone answers)."""
    target.require(arch, "kernel", "kernel")
    trace = _evaluate(src, launch, max_steps, max_seconds)
    notes = list(trace.notes)
    runs = _runs(src, trace, arch, max_seconds, notes)
    reports = _count(src, trace, arch, launch, runs, notes)
    if second_engine and {"algebra", "z3"} & set(engines):
        reports = crosscheck.cross_check(reports, src.code, trace, runs.merge_of, notes, engines)
    if second_engine and any(r.verdict == "refuted" and r.conflict is not None for r in reports):
        reports = fixes.with_fixes(src.code, trace, reports, runs.merge_of, launch, notes)
    result = _account(src, launch, arch, trace, reports, runs.unknown, notes)
    return (result, trace) if keep_trace else result


@dataclass(frozen=True)
class _Runs:
    """What the SASS runs of the PTX (``merge_of``: each instruction's fate), the registers holding
    shared addresses, and what the analysis could not follow or read (``unknown``)."""

    merge_of: dict
    shared: set
    unknown: list


def _evaluate(src: KernelSource, launch: Launch, max_steps: int, max_seconds: float) -> Trace:
    """One CTA run by the PTX machine; it stops at :data:`RUN_SHARE` of the time (what it ran is
    then counted, linear in the steps)."""
    return _exits(src.code, simt.run(src.code, launch, max_steps, max_seconds * RUN_SHARE))


def _runs(src: KernelSource, trace: Trace, arch: str, max_seconds: float, notes: list) -> _Runs:
    """What runs: the SASS read (or, without it, ptxas's merges predicted), and what is unknown."""
    shared = shared_pointers(src.code)  # registers holding shared addresses (generic ld/st through them)
    seen = sass_effects.effects(src.code, src.module.text, arch, shared, max_seconds * SASS_SHARE, notes)
    merge_of, orphans = seen if seen is not None else (ptxas.predicted(src.code, dict(trace.instances)), [])
    if seen is None:  # a shared atomic is counted by the PTX only in the form the probe ran
        merge_of.update(sass_effects.unseen_atomics(src.code, shared))
    unknown = [f"{_where(src.code.body[i])}: {why}" for i, why in sorted(trace.lost.items())]
    return _Runs(merge_of, shared, unknown + _unknown_opcodes(src.code) + orphans)


def _count(src: KernelSource, trace: Trace, arch: str, launch: Launch, runs: _Runs, notes: list) -> list:
    """Every shared-memory instruction's report, its instances counted by the engine."""
    lost_reach = costs.reachable(src.code, [i for i in trace.lost]) if trace.lost else set()
    window = costs.shared_window(src.code, dict(trace.symbols), launch.dynamic_smem)
    reports = []
    for op in src.code.body:
        rep = _instruction(
            src.code, op, trace, arch, op.index in lost_reach, notes, runs.merge_of, runs.shared, window
        )
        if rep is not None:
            reports.append(rep)
    return reports


def _account(
    src: KernelSource, launch: Launch, arch: str, trace: Trace, reports: list, unknown: list, notes: list
) -> KernelResult:
    """The kernel's verdict, its per-line and per-kind totals, as the record."""
    undecided = any(
        r.verdict == "unknown"
        and (r.family in COUNTED or r.family in UNMODELLED or r.rests_on in reconcile.HIDDEN)
        for r in reports
    )
    verdicts = {r.verdict for r in reports}
    verdict = next((v for v in ("disagree", "refuted") if v in verdicts), None)
    verdict = verdict or ("unknown" if unknown or undecided else "proved")
    launched = {
        "block": list(launch.block),
        "grid": list(launch.grid),
        "cta": list(launch.cta),
        "dynamic_smem": launch.dynamic_smem,
        "args": {k: v for k, v in launch.args},
    }
    return KernelResult(
        SCHEMA, src.name, src.code.name, arch, launched, verdict, tuple(reports), line_totals(reports),
        kind_totals(reports), tuple(unknown), tuple(dict.fromkeys(notes)), dict(trace.symbols), trace.steps,
    )  # fmt: skip


def _exits(code: KernelCode, trace: Trace) -> Trace:
    """The trace as ptxas runs the kernel's tail: loads it moves after an early exit
    (:func:`.ptxas.exits_before`) issue only in warps with a thread that stays."""
    moved = ptxas.exits_before(code) if not trace.lost else {}
    if not moved:
        return trace
    instances, executed = dict(trace.instances), dict(trace.executed)
    for i, (negated, reg) in moved.items():
        value = trace.final.get(reg)
        inst = instances.get(i)
        if value is None or inst is None or not value.k.all() or inst.execution.max() > 0:
            continue
        kept = ptxas.after_exit(inst, (negated, value))
        instances[i] = kept
        executed[i] = (len(kept.warp), len(kept.warp))
    return replace(trace, instances=instances, executed=executed)


def _where(op: Op) -> str:
    return f"{op.loc.text()} (PTX line {op.ptx_line})" if op.loc else f"PTX line {op.ptx_line}"


def _unknown_opcodes(code: KernelCode) -> list[str]:
    """An opcode outside the PTX instruction set, at its first line: what it does is unknown."""
    first = {}
    for op in code.body:
        first.setdefault(op.base, op)
    why = "is not a PTX instruction bankproof knows (its effect is unknown)"
    return [f"{_where(first[b])}: {first[b].opcode} {why}" for b in unknown_opcodes(first)]


def _report(base: dict, extra: dict, *counted, conflict=None) -> InstructionReport:
    """The report of one instruction: where it is (``base``, with its ``instr``), ``extra`` (its
    reach) and its answer from ``counted`` (see :func:`~bankproof.verifier.engine.answer.enumerated`)."""
    where = {k: v for k, v in base.items() if k != "instr"}
    return InstructionReport(**where, answer=enumerated(base["instr"], *counted, conflict=conflict), **extra)


def _uncounted(base: dict, extra: dict, on, verdict: str, status: str, reason: str) -> InstructionReport:
    """An instruction executed but not counted: an address no GPU runs as counted."""
    return _report(base, extra, on, None, None, None, verdict, status, reason)


def _instruction(
    code: KernelCode,
    op: Op,
    trace: Trace,
    arch: str,
    lost: bool,
    notes: list,
    merge_of: dict,
    shared: set,
    window: int,
) -> InstructionReport | None:
    c = simt.classify(op, shared)
    if c is None:
        return None
    fam, name = c
    on, reached = trace.executed.get(op.index, (0, 0))
    base = dict(
        ptx_line=op.ptx_line,
        opcode=op.opcode,
        family=fam,
        instr=name,
        location=_loc(op.loc),
        inlined_from=_loc(op.inner) if op.inner != op.loc else None,
    )
    extra = {"instructions_reached": reached} if reached > on else {}
    if trace.skipped.get(op.index):
        extra["instructions_predicated"] = reached + trace.skipped[op.index]
    if lost:
        why = "reached after a point the analysis could not follow (see unknown)"
        return _report(base, {}, None, None, None, None, "unknown", "unknown", why)
    inst = trace.instances.get(op.index)
    if fam not in COUNTED:
        engine = reconcile.status_of(merge_of.get(op.index)) == reconcile.ENGINE
        wf = 0 if fam in ("tma", "mma") or engine else None
        why = costs.TMA_NOTE if fam == "tma" else reconcile.rewritten(merge_of.get(op.index), on)
        status = "measured" if fam == "tma" else reconcile.status_of(merge_of.get(op.index))
        why = why or (
            f"{fam} instructions are counted, their wavefronts not modelled"
            if wf is None
            else "no LSU shared wavefronts"
        )
        return _report(base, extra, on, wf, wf, wf, "proved" if wf == 0 else "unknown", status, why)
    if inst is None:  # never executed in this CTA
        return _none_issued(base, extra, "measured", "not executed by this CTA")
    m = merge_of.get(op.index)
    increment = isinstance(m, reconcile.Fate) and m.kind == "increment"  # ATOMS.POPC.INC: counted
    if increment:
        m = None
    if isinstance(m, reconcile.Fate):
        return _from_sass(base, extra, on, m)
    if isinstance(m, ptxas.Reuse) and m.of < 0:
        return _none_issued(base, extra, "assumed", "ptxas removes it: nothing reads its result (measured)")
    if isinstance(m, ptxas.Reuse):
        first = code.body[m.of].ptx_line
        return _none_issued(
            base, extra, "assumed", f"ptxas reuses the value loaded at PTX line {first} (no store between)"
        )
    if m is not None and op.index != m.members[0]:
        first = code.body[m.members[0]].ptx_line
        sass_op = f"{name[:2].upper()}S.{8 * m.size}"
        status = "measured" if m.seen else "assumed"
        return _none_issued(base, extra, status, f"merged by ptxas into the {sass_op} of PTX line {first}")
    if m is not None:
        inst = ptxas.merged_instances(m, dict(trace.instances))
        name = f"{name[:2]}{8 * m.size}"
        notes.append(ptxas.merge_note(code, m, base["instr"]))
        base["instr"] = name
    if fam == "ldgsts":
        cnt, ideal, ok, status = tables.copy_counts(
            name,
            inst.offsets,
            inst.active,
            inst.known,
            inst.source,
            inst.source_known,
            zfill=len(op.operands) > 3,
        )
        ins = instruction({4: "st32", 8: "st64", 16: "st128"}[int(name[2:].split(".")[0])])
    else:
        ins = instruction("st32" if fam == "atom32" else name)  # an atomic's place: a 32-bit word's
        away = costs.outside(ins, inst, window) if "cluster" not in op.opcode else None
        if away is not None:
            row, lane = away
            where = f"warp {int(inst.warp[row])} lane {lane}: byte address {int(inst.offsets[row][lane])}"
            why = f"{where} lies outside the CTA's {window} bytes of shared memory (out of bounds)"
            return _uncounted(base, extra, on, "refuted", "outside the window", why)
        bad = costs.misaligned(ins, inst)
        if bad is not None:
            lane = int(np.flatnonzero(inst.offsets[bad] % (16 if ins.is_matrix else ins.width))[0])
            where = f"warp {int(inst.warp[bad])} lane {lane}: byte address {int(inst.offsets[bad][lane])}"
            why = f"{where} is not aligned for {ins.name} (the hardware faults)"
            return _uncounted(base, extra, on, "refuted", "misaligned", why)
        ok = inst.known.copy()
        off = np.where(ok[:, None] & inst.active, inst.offsets, 0)  # an inactive lane's address is never used
        if fam == "atom32":
            cnt, ideal = tables.atomic_counts(off, inst.active, increment)
            status = atomic_rule.status(arch)
        else:
            cnt, ideal = tables.counts(ins, off, inst.active & ok[:, None])
            status = costs.status(arch, ins) if m is None or m.seen else "assumed"
        if "shared" not in op.opcode:  # SASS LD/ST on a shared address: counted as LDS/STS are
            notes.append("generic ld/st of shared addresses count as shared loads and stores (measured: "
                         "gpu_checks/results/h100-2026-11-28-kernel-truth-2.json.gz)")  # fmt: skip
    over = np.flatnonzero(ok & (cnt > ideal))
    conflict, reason = None, None
    if over.size:
        row = int(over[0])
        store = tables.counts(ins, inst.offsets[row : row + 1], inst.active[row : row + 1])[0][0]
        warp, execution = int(inst.warp[row]), int(inst.execution[row])
        if fam == "atom32":
            conflict = tables.atomic_conflict(name, warp, execution, inst.offsets[row], inst.active[row],
                                              int(cnt[row]), increment)  # fmt: skip
        elif store > ideal[row]:  # the shared side conflicts (for cp.async: its store)
            conflict = tables.conflict(ins, warp, execution, inst.offsets[row], inst.active[row],
                                       int(cnt[row]), int(ideal[row]))  # fmt: skip
        else:  # a cp.async.ca that reads more 128-byte global lines than its store takes wavefronts
            reason = (
                f"warp {int(inst.warp[row])}, execution {int(inst.execution[row])}: the copy reads "
                f"{int(cnt[row])} global 128-byte lines (its shared store takes {int(store)} wavefronts)"
            )
    all_known = bool(ok.all())
    verdict = "refuted" if over.size else ("proved" if all_known else "unknown")
    total = int(cnt[ok].sum()) if all_known else None
    reason = reason if all_known else costs.why_unknown(fam, inst, ok, name, trace.why.get(op.index, ""))
    top = int(cnt[ok].max()) if ok.any() else None
    rep = _report(base, extra, on, total, int(ideal[ok].sum()) if all_known else None, top, verdict, status,
                  reason, conflict=conflict)  # fmt: skip
    return costs.bounded(rep, fam == "lsu" and not ins.is_matrix, cnt, ok, inst.active, ins.width)


def _from_sass(base: dict, extra: dict, on: int, f) -> InstructionReport:
    """A PTX instruction as the SASS runs it: deleted (nothing issued), or split, rewritten or
    unexplained (unknown; ``disagree`` where the tool cannot explain the SASS)."""
    if f.kind == "deleted":
        return _none_issued(base, extra, "measured", f.why)
    if f.kind == "rewritten":  # an atomic of a measured form that ptxas runs otherwise
        status = reconcile.status_of(f)  # another ATOMS form: its own instruction, cost not measured
        status = status if status in (reconcile.LOOPED, reconcile.AS_LOADS) else reconcile.UNMODELLED
        why = reconcile.rewritten(f, on) if status == reconcile.LOOPED else f.why
        return _uncounted(base, extra, on, "unknown", status, f"{why}: not measured")
    return _uncounted(
        base,
        extra,
        on,
        *(("disagree", reconcile.DISAGREES) if f.kind == "disagree" else ("unknown", reconcile.UNMODELLED)),
        f.why,
    )


def _none_issued(base: dict, extra: dict, status: str, reason: str) -> InstructionReport:
    """An instruction no warp issues as written (never reached, or folded into another by ptxas)."""
    return _report(base, extra, 0, 0, 0, 0, "proved", status, reason)
