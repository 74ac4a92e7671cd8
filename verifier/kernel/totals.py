"""A kernel's account summed: per user's source line, and per op kind as Nsight Compute's
SASS-level counters count them (``COUNTERS``: the instructions and wavefronts metrics of each kind).

>>> kind_of("lsu", "ldsm.x4.trans"), kind_of("lsu", "st128"), kind_of("ldgsts", "cp16.cg")
('ldsm', 'st', 'ldgsts')
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from bankproof.verifier.kernel.reconcile import AS_ATOMICS, AS_LOADS, HIDDEN, LOOPED
from bankproof.verifier.kernel.records import InstructionReport, KindTotal, LineTotal, SourceLine
from bankproof.verifier.kernel.sites import COUNTED, UNMODELLED

COUNTERS = {  # op kind -> Nsight Compute's SASS-level counters (instructions, wavefronts)
    "ld": (
        "smsp__sass_inst_executed_op_shared_ld.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ),
    "st": (
        "smsp__sass_inst_executed_op_shared_st.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ),
    "ldsm": (
        "sm__sass_inst_executed_op_ldsm.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    ),
    "stsm": (
        "sm__sass_inst_executed_op_shared_stsm.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
    ),
    "ldgsts": (
        "sm__sass_inst_executed_op_ldgsts.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    ),
    "atomic": (
        "smsp__sass_inst_executed_op_shared_atom.sum",
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    ),
}


def kind_of(family: str, name: str) -> str:
    """The op kind Nsight Compute counts an instruction under (``ld``, ``st``, ``ldsm``, ...)."""
    if family == "lsu":
        return name.split(".")[0] if name.startswith(("ldsm", "stsm")) else name[:2]
    return "atomic" if family == "atom32" else family


def line_totals(reports: list[InstructionReport]) -> tuple[LineTotal, ...]:
    """Per user's line: warp instructions and LSU wavefronts of its shared-memory instructions.
    A line whose every instruction is of a family with no wavefront model (mbarrier, atomics) has
    its instructions counted and its wavefronts ``None``, verdict ``not modelled``."""
    by: dict = defaultdict(list)
    for r in reports:
        by[(r.location.file, r.location.line) if r.location else ("", 0)].append(r)
    out = []
    for (f, ln), rs in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ins = [r.instructions for r in rs]
        costed = [r for r in rs if r.family in COUNTED or r.wavefronts == 0 and r.rests_on == "measured"]
        wf = [r.wavefronts for r in costed]
        idl = [r.ideal for r in costed]
        unmodelled = any(r.family in UNMODELLED or r.rests_on in HIDDEN for r in rs)
        if any(r.verdict == "refuted" for r in rs):
            verdict = "refuted"
        elif unmodelled:
            verdict = "unknown"
        elif not costed:
            verdict = "not modelled"
        elif any(r.verdict == "unknown" for r in costed):
            verdict = "unknown"
        else:
            verdict = "proved"
        kinds = tuple(sorted({kind_of(r.family, r.instr) for r in rs}))
        total = None if None in ins else sum(ins)
        wsum = None if None in wf or not costed or unmodelled else sum(wf)
        isum = None if None in idl or not costed or unmodelled else sum(idl)
        out.append(LineTotal(SourceLine(f, ln) if f else None, kinds, total, wsum, isum, verdict))
    return tuple(out)


def _range(rs: list[InstructionReport]) -> tuple[int, int] | None:
    """Bounds on a kind's wavefronts where each instruction's are known or bounded."""
    if any(r.wavefronts is None and r.wavefronts_range is None for r in rs):
        return None
    low = sum(r.wavefronts if r.wavefronts is not None else r.wavefronts_range[0] for r in rs)
    return low, sum(r.wavefronts if r.wavefronts is not None else r.wavefronts_range[1] for r in rs)


def kind_totals(reports: list[InstructionReport]) -> tuple[KindTotal, ...]:
    by: dict = defaultdict(list)
    for r in reports:
        by[kind_of(r.family, r.instr)].append(r)
    looped = any(r.rests_on == LOOPED for r in reports)  # a CAS loop's LDS and ATOMS run a timing's count
    # shared accesses no rule counts (another CTA's shared memory, the bulk engine, an unread form):
    # where Nsight Compute counts them is not known, so no load or store total is stated
    stray = any(r.family in UNMODELLED - {"atomic"} or r.rests_on == AS_LOADS for r in reports)
    hidden_atomics = any(r.rests_on == AS_ATOMICS for r in reports)  # sm80's mbarrier arrive: ATOMS
    out = []
    for kind in (
        "ld",
        "st",
        "ldsm",
        "stsm",
        "ldgsts",
        "tma",
        "mma",
        "atomic",
        "mbarrier",
        "tensormap",
        "tmem",
    ):
        rs = by.get(kind, [])
        odd = [None] if stray and kind in ("ld", "st") or hidden_atomics and kind == "atomic" else []
        if not rs and not odd:
            continue
        ins = [r.instructions for r in rs] + ([None] if looped and kind in ("ld", "atomic") else []) + odd
        wf = [r.wavefronts for r in rs] + ([None] if looped and kind == "ld" else []) + odd
        idl = [r.ideal for r in rs] + ([None] if looped and kind == "ld" else []) + odd
        total = KindTotal(
            kind,
            None if None in ins else sum(ins),
            None if None in wf else sum(wf),
            None if None in idl else sum(idl),
            COUNTERS.get(kind, ()),
        )
        out.append(
            replace(total, range=_range(rs)) if total.wavefronts is None and len(wf) == len(rs) else total
        )
    return tuple(out)
