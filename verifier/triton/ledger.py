"""The whole-kernel ledger: every shared-memory instruction of Triton's PTX, attributed to the
TTGIR op it comes from, with its executions per CTA and its wavefronts.

Sources, per instruction group (one source location, instruction and loop nest):

- explicit buffers (``local_alloc/local_store/local_load/async_copy_global_to_local``): the
  scan's layout count (``scan.py``); where the PTX fixes every thread's address too (outside a
  pipelined loop), the PTX's own addresses are counted as well and the two must agree.
- scratch of ``tt.reduce``, ``tt.scan``, ``tt.histogram``, ``tt.gather``, ``ttg.convert_layout``
  and any other op Triton's allocator gives scratch: the addresses Triton's lowering computes,
  read from the PTX (``ptx.py``) for every thread of the CTA, counted by the hardware model.
- TMA copies, wgmma/tcgen05 operand reads, mbarrier, tensor-map and tensor-memory-address
  instructions: listed with their op, not counted in LSU shared wavefronts (``counted: false``).

Executions: the PTX loops around an instruction are matched in order with the TTGIR's ``scf.for``
nest; a loop's trip count is resolved where its bounds are constants (or, given the kernel's
arguments, from them; ``program_id_x``/``num_programs_x``... for ``tl.program_id`` and
``tl.num_programs``, e.g. :data:`ONE_CTA`), else the entry costs "per iteration".

>>> ptx = '''.visible .entry k()
... .reqntid 64
... {
... .loc 1 7 3
...   mov.u32 %r1, %tid.x;
...   shl.b32 %r2, %r1, 2;
...   st.shared.b32 [%r2], %r1;
... }
... .file 1 "k.py"'''
>>> ttgir = '''module {
...   tt.func public @k() {
...     %s = "tt.reduce"(%x) <{axis = 0 : i32}> ({
...     }) : (tensor<64xf32>) -> f32 loc(#loc2)
...   } loc(#loc)
... } loc(#loc)
... #loc = loc("k.py":1:0)
... #loc2 = loc("k.py":7:3)'''
>>> led = build(ScanReport(file="k", target=None, num_warps=2, buffers=(), conversions=()), ttgir, ptx)
>>> e = led.entries[0]
>>> e.op, e.kind, e.instr, e.instructions, e.executions, e.wavefronts, e.ideal
('tt.reduce', 'scratch', 'st32', 2, 1, 2, 2)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from bankproof.models.errors import InputError
from bankproof.verifier.kernel.buffers import Buffer
from bankproof.verifier.ptx import Kernel, PtxLoop, SharedOp, analyse
from bankproof.verifier.ptx.parse import parse_program
from bankproof.verifier.results.decode import decode
from bankproof.verifier.triton.ledger_branches import branches, guard, site_conds
from bankproof.verifier.triton.ledger_machine import fill, launch_for, run_counts
from bankproof.verifier.triton.ledger_records import LedgerEntry, LedgerReport, Unknown
from bankproof.verifier.triton.ledger_rules import (
    EXIT_BEFORE,
    RULES,
    TENSORMAP_LSU,
    Group,
    Ledger,
    ScanClaim,
    claim_moved,
    instr_name,
    warps_of,
    where_text,
)
from bankproof.verifier.triton.ledger_totals import totals
from bankproof.verifier.triton.lowering import access_instr
from bankproof.verifier.triton.measured_rules import bound_narrow_ca
from bankproof.verifier.triton.scan_records import ScanReport
from bankproof.verifier.triton.sites import Loop, Site, read_sites

__all__ = ["ONE_CTA", "TENSORMAP_LSU", "build", "unchecked"]

MAX_TRIPS = 1 << 31  # a trip count given for a loop whose bound is loaded from memory
ONE_CTA = {"program_id_x": 0, "program_id_y": 0, "program_id_z": 0,
           "num_programs_x": 1, "num_programs_y": 1, "num_programs_z": 1}  # fmt: skip


WHILE_COND = "in an scf.while's condition region, which runs once more than the loop's body"


def _loop_map(kernel: Kernel, ptx_loops: list[PtxLoop], sites: list[Site]) -> dict[int, Loop] | None:
    """PTX loop (start index) -> TTGIR loop, with the same nesting. LLVM places blocks in its own
    order (a branch's loop may come after the loop that follows it in the TTGIR), so loops are
    paired level by level, inside already paired parents, by the source locations their bodies
    share (then by position among their siblings: warp-specialize partitions repeat code)."""
    tparent: dict[Loop, Loop | None] = {}
    where: dict[Loop, set] = defaultdict(set)
    for s in sites:
        for d, lp in enumerate(s.loops):
            tparent.setdefault(lp, s.loops[d - 1] if d else None)
            if s.site:
                where[lp].add(s.site)
    ttgir = sorted(tparent, key=lambda lp: lp.line)
    if len(ttgir) != len(ptx_loops):
        return None
    pparent: dict[int, int | None] = {}
    for i, lp in enumerate(ptx_loops):
        around = [j for j, o in enumerate(ptx_loops) if lp.body < o.body]
        pparent[i] = min(around, key=lambda j: len(ptx_loops[j].body), default=None)
    body = [{kernel.body[i].loc for i in lp.body if kernel.body[i].loc} for lp in ptx_loops]
    out: dict[int, Loop] = {}

    def pair(p_parent: int | None, t_parent: Loop | None) -> bool:
        pk = [i for i in range(len(ptx_loops)) if pparent[i] == p_parent]
        tk = [lp for lp in ttgir if tparent[lp] == t_parent]
        if len(pk) != len(tk):
            return False
        ranked = sorted(
            ((len(body[i] & where[lp]) / max(1, len(body[i] | where[lp])), -abs(a - b), i, lp)
             for a, i in enumerate(pk) for b, lp in enumerate(tk)),
            key=lambda r: (r[0], r[1]), reverse=True,
        )  # fmt: skip
        here: dict[int, Loop] = {}
        for _, _, i, lp in ranked:
            if i not in here and lp not in here.values():
                here[i] = lp
        out.update(here)
        return all(pair(i, lp) for i, lp in here.items())

    if not pair(None, None):
        return None
    return {ptx_loops[i].head: lp for i, lp in out.items()}


def _scan_counts(report: ScanReport, by_line: dict[int, Site]) -> dict[tuple, list[ScanClaim]]:
    """The scan's accesses by (site, instruction name, TTGIR loop nest)."""
    out: dict[tuple, list[ScanClaim]] = defaultdict(list)
    for b in report.buffers:
        for a in b.accesses:
            if a.instr is None:
                continue
            s = by_line.get(a.location.ttgir_line)
            if s is None:
                continue
            warps = s.partition[1] if s.partition else report.num_warps
            out[(s.site, access_instr(a.op, a.instr), s.loops)].append(ScanClaim(a, b.buffer, warps))
    return out


def _entry(loc: tuple, fam: str, name: str, grp: list[SharedOp], lp, warps: int, args, conds=()) -> dict:
    """What every entry says: where, which instruction, how many per warp and per CTA, how often."""
    lines = [o.ins.line for o in grp]
    entry = {"location": where_text(loc), "family": fam, "instr": name, "ptx_lines": lines}
    if fam == "ldgsts":
        entry["cache"] = sorted({o.name.split(".")[1] for o in grp})
    # warps that execute it: those with an active lane where the PTX says which (ptxas branches
    # around a shared access no lane of a warp makes: measured, descriptor zeroing), else those
    # whose control flow reaches it
    entry["instructions_per_warp"] = len(grp)
    entry["instructions"] = sum(warps_of(o, warps) for o in grp)
    reached = sum(int(o.reach.any(axis=1).sum()) if o.reach is not None else warps for o in grp)
    if reached > entry["instructions"]:  # warps the guard turns wholly off: ptxas predicates or branches
        entry["instructions_reached"] = reached
    if lp is None:
        entry["loops"], entry["executions"] = None, None
        entry["executions_reason"] = "the PTX's loops do not match the TTGIR's scf.for nest"
    else:
        trips = [x.trips(args) for x in lp]
        entry["loops"] = [{"ttgir_line": x.line, "bounds": x.text(), "trips": t}
                          | ({"unknown": x.unknown, "why": x.why(args)} if t is None else {})
                          for x, t in zip(lp, trips, strict=True)]  # fmt: skip
        entry["executions"] = int(np.prod(trips)) if all(t is not None for t in trips) else None
        if entry["executions"] is None:
            why = next((w for x in lp if (w := x.why(args))), "a loop's bounds are run-time values")
            entry["executions_reason"] = f"per iteration: {why}"
    branches(entry, conds, args, lp or ())
    guard(entry, grp)
    if any(o.conditional for o in grp):
        entry["conditional"] = True
    if any(o.extra.get("exit_before") for o in grp):
        entry["note"] = EXIT_BEFORE
    return entry


def build(
    report: ScanReport,
    ttgir: str,
    ptx: str,
    args: dict[str, int] | None = None,
    source=None,
    buffers: Mapping[str, Buffer] | None = None,
) -> LedgerReport:
    """The ledger of one compiled kernel (see the module docstring): ``entries``, ``unattributed``
    PTX instructions (no TTGIR op at their source location can account for them),
    ``disagreements`` (the scan's count and the PTX's addresses differ), and ``totals``. Each
    group of instructions goes to the first rule of :data:`~bankproof.verifier.triton.ledger_rules.RULES`
    that owns it. ``source``: the compile already read (:mod:`.source`), else the texts are read."""
    if source is not None:
        kernel, program = source.fresh_kernel(), source.program
    else:
        module, code, kernel = parse_program(ptx)
        program = (module, code)
    sites, _, arg_names = source.sites if source is not None else read_sites(ttgir)
    check_given(sites, list(arg_names), args)
    kernel.memo["launch"] = launch_values(kernel, arg_names, args)
    ops, ptx_loops = analyse(kernel)
    lmap = _loop_map(kernel, ptx_loops, sites)
    led = Ledger(_scan_counts(report, {s.line: s for s in sites}), sites, max(1, kernel.threads // 32))

    def nest(o: SharedOp) -> tuple[Loop, ...] | None:
        if not o.loops:
            return ()
        return None if lmap is None else tuple(lmap[i] for i in o.loops)

    # the PTX names one caller of an inlined function (``inlined_at``), the TTGIR the whole chain:
    # a location that only appears inside chains stands for the op's own (outermost) site
    callers: dict[tuple, set] = defaultdict(set)
    for s in sites:
        for e in s.chain[:-1]:
            callers[e].add(s.site)

    def site_of(loc: tuple) -> tuple:
        c = callers.get(loc, set())
        return next(iter(c)) if loc not in led.by_site and len(c) == 1 else loc

    groups: dict[tuple, list[SharedOp]] = defaultdict(list)
    for o in ops:
        groups[(site_of(o.ins.loc), o.family, instr_name(o), o.loops, o.extra.get("ws_state", 0))].append(o)
    for (loc, fam, name, _, state), grp in groups.items():
        lp = nest(grp[0])
        names = {s.name for s in led.by_site.get(loc, [])}
        at = led.by_site.get(loc, [])
        same_nest = [x for x in at if lp is not None and x.loops == tuple(lp)]  # the op among those at loc
        entry = _entry(loc, fam, name, grp, lp, led.warps, args, site_conds(same_nest or at))
        if any(x.in_while_cond for x in same_nest or at):  # runs once more than the loop's body
            entry.update(loops=None, executions=None, executions_reason=WHILE_COND)
        here = f"{loc[0]}:{loc[1]}"  # SASS names an op's innermost location; the chain holds them all
        entry["chain"] = sorted({f"{c[0]}:{c[1]}" for x in at for c in x.chain} | {here})
        inner = {f"{x.chain[0][0]}:{x.chain[0][1]}" if x.chain else here for x in at}
        entry["sass_lines"] = sorted(inner or {here})
        g = Group(loc, fam, name, state, grp, lp, names, entry)
        next(rule for rule in RULES if rule(g, led))
    claim_moved(led, {site_of(o.ins.loc) for o in ops if o.family == "lsu"})  # a wgmma there is not its own
    for (loc, name, _), accesses in led.scan.items():  # counted by the scan, absent from the PTX
        led.disagreements.append(
            f"{where_text(loc)}: scan counts {name} for {accesses[0].access.op}, the PTX has none there"
        )
    bound_narrow_ca(led.entries)
    launch = launch_for(program[1], list(arg_names), args, buffers) if program is not None else None
    reports = run_counts(program, launch) if launch is not None else None
    if reports is not None:  # the launch is wholly given: the kernel machine's run of it
        fill(led.entries, reports, led.disagreements)
    for e in led.entries:
        if e.get("run_total_wavefronts") is not None:  # a run's total over uneven executions
            e["total_wavefronts"] = e.pop("run_total_wavefronts")
            e["total_instructions"] = e["instructions"] * e["executions"]
        elif e.get("wavefronts") is not None and e.get("executions") is not None:
            e["total_wavefronts"] = e["wavefronts"] * e["executions"]
            e["total_instructions"] = e["instructions"] * e["executions"]
            if e.get("wavefronts_max", 0) > e["wavefronts"]:
                e["total_wavefronts_max"] = e["wavefronts_max"] * e["executions"]
    unknowns = {}  # the loops whose trip counts the totals' formulas leave open
    for e in led.entries:
        if e.get("total_wavefronts") is not None:  # totalled (by the launch's run): no formula left
            continue
        for lp in e.get("loops") or ():
            if lp.get("unknown"):
                why = lp.get("why") or "a bound is a run-time value"
                unknowns.setdefault(
                    lp["unknown"], Unknown(lp["unknown"], lp["ttgir_line"], lp["bounds"], why)
                )
    return LedgerReport(
        kernel=kernel.name,
        threads=kernel.threads,
        arguments=tuple(arg_names),
        entries=tuple(decode(LedgerEntry, e, "ledger entry") for e in led.entries),
        unattributed=tuple(led.unattributed),
        disagreements=tuple(led.disagreements),
        totals=totals(led.entries),
        incomplete=tuple(_incomplete(led.entries, led.unattributed, led.disagreements)),
        unknowns=tuple(unknowns[k] for k in sorted(unknowns)) or None,
    )


def check_given(sites: list[Site], arg_names: list[str], args: dict[str, int] | None) -> None:
    """Each ``fill_<argument>`` given must name a kernel argument, and each ``trips_L<line>`` a
    loop whose trip count the other arguments leave open (a bound loaded from memory), with a
    count of 0 or more."""
    for name in args or {}:
        if name.startswith("fill_") and name[5:] not in arg_names:
            have = ", ".join(arg_names) or "none"
            raise InputError("ledger", "--arg", f"{name} names no argument of the kernel ({have})", name)
    loops = {lp.unknown: lp for s in sites for lp in s.loops}
    rest = {k: v for k, v in (args or {}).items() if not k.startswith("trips_L")}
    for name, v in (args or {}).items():
        if not name.startswith("trips_L"):
            continue
        if name not in loops:
            have = ", ".join(sorted(loops)) or "none"
            why = f"{name} names no scf.for of the kernel (loops: {have})"
            raise InputError("ledger", "--arg", why, name)
        known = loops[name].trips(rest)
        if known is not None:
            why = f"{name}: the arguments already give its trip count ({known})"
            raise InputError("ledger", "--arg", why, v)
        if not 0 <= v <= MAX_TRIPS:
            raise InputError("ledger", "--arg", f"{name} must be a trip count from 0 to {MAX_TRIPS}", v)


def _incomplete(entries: list[dict], unattributed: list, disagreements: list) -> list[str]:
    """Why the kernel's totals are not complete (empty: every shared instruction owned and counted,
    every execution count and branch decided)."""
    out = [f"{len(unattributed)} instruction group(s) no TTGIR op owns"] if unattributed else []
    out += [f"{len(disagreements)} disagreement(s) between the scan and the PTX"] if disagreements else []
    for e in entries:
        if not e.get("counted"):
            continue
        where = f"{e['location']} {e.get('op', '?')} {e['instr']}"
        if e.get("wavefronts") is None:
            out.append(f"{where}: wavefronts unknown ({e.get('reason', '')})")
        elif e.get("executions") is None:
            out.append(f"{where}: {e.get('executions_reason', 'executions unknown')}")
        elif e.get("condition"):
            out.append(f"{where}: runs if {' and '.join(e['condition'])} ({e.get('condition_why')})")
        elif e.get("wavefronts_max", 0) > e["wavefronts"]:
            out.append(f"{where}: {e['wavefronts']} to {e['wavefronts_max']} wavefronts ({e['lines_note']})")
    return out


def launch_values(kernel: Kernel, arg_names: list[str], args: dict[str, int] | None) -> dict:
    """What the PTX evaluator may take as known: the program ids and grid of the CTA asked for
    (``program_id_x``, ``num_programs_x``, ...) and the arguments given, matched to the PTX's
    parameters by position (Triton's PTX lists the TTGIR function's arguments in order, then its
    scratch pointers)."""
    args = args or {}
    out: dict = {}
    for axis in "xyz":
        if f"program_id_{axis}" in args:
            out[f"ctaid.{axis}"] = int(args[f"program_id_{axis}"])
        if f"num_programs_{axis}" in args:
            out[f"nctaid.{axis}"] = int(args[f"num_programs_{axis}"])
    out["params"] = {kernel.params[i][1]: int(args[n]) for i, n in enumerate(arg_names)
                     if n in args and i < len(kernel.params)}  # fmt: skip
    return out


def unchecked(ledger: LedgerReport) -> list[str]:
    """Ledger entries whose wavefronts are not known (a gate must not pass on them)."""
    return [
        f"{e.location} {e.op} {e.instr}: wavefronts unknown ({e.reason or ''})"
        for e in ledger.entries
        if e.family in ("lsu", "ldgsts") and e.wavefronts is None
    ]
