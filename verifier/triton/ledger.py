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
>>> led = build({"buffers": [], "num_warps": 2}, ttgir, ptx)
>>> e = led["entries"][0]
>>> e["op"], e["kind"], e["instr"], e["instructions"], e["executions"], e["wavefronts"], e["ideal"]
('tt.reduce', 'scratch', 'st32', 2, 1, 2, 2)
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from bankproof.models.hardware import evaluate, instruction
from bankproof.verifier.triton.lowering import access_instr
from bankproof.verifier.triton.ptx import Kernel, PtxLoop, SharedOp, analyse, parse_kernel
from bankproof.verifier.triton.ttgir import Loop, Site, read_sites

BUFFER_OPS = ("ttg.local_alloc", "ttg.local_store", "ttg.local_load", "ttg.async_copy_global_to_local")
SCRATCH_OPS = ("ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather", "tt.sort",
               "tt.topk", "tt.atomic_rmw", "tt.atomic_cas", "ttg.warp_specialize")  # fmt: skip
FAMILY_OPS = {
    "tma": ("ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
            "ttng.async_tma_gather", "ttng.async_tma_scatter", "ttng.async_tma_reduce",
            "ttng.async_copy_global_to_local", "ttng.async_tma_prefetch"),
    "mma": ("ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"),
    "mbarrier": ("ttng.init_barrier", "ttng.inval_barrier", "ttng.barrier_expect", "ttng.wait_barrier",
                 "ttng.arrive_barrier", "ttng.tc_gen5_commit", "ttng.async_tma_copy_global_to_local",
                 "ttng.tc_gen5_mma", "ttng.async_copy_mbarrier_arrive"),
    "tensormap": ("ttng.tensormap_create",),
    "tmem": ("ttng.tmem_alloc", "ttng.tc_gen5_commit", "ttng.tc_gen5_mma"),
}  # fmt: skip
# the launch values of one CTA launched alone (the GPU records' runs): for ``build``'s args
ONE_CTA = {"program_id_x": 0, "program_id_y": 0, "program_id_z": 0,
           "num_programs_x": 1, "num_programs_y": 1, "num_programs_z": 1}  # fmt: skip
NOT_COUNTED = {
    "tma": "TMA copy: the tensor-memory accelerator moves it, not LSU shared wavefronts",
    "mma": "tensor-core operand read through a shared-memory descriptor (ncu: op_gmma for wgmma)",
    "mbarrier": "mbarrier operation on an 8-byte barrier word",
    "tensormap": "tensor-map field update in shared memory before the descriptor is copied out",
    "tmem": "tensor-memory allocation writes the tensor-memory address to shared memory",
}
ATOMIC_REASON = (
    "shared atomics at data-dependent addresses (a histogram's bins): the cost depends on the input "
    "values, so there is no static count (Nsight Compute: op_atom)"
)
EXIT_BEFORE = "ptxas exits the threads whose store of this value is off before the load (measured rule)"
WS_STATE = "warp-specialize state word (which partition each worker warp runs, then exit)"
# ops whose scratch the descriptor-creation code writes with plain stores (zeroing the 128-byte map)
DESCRIPTOR_OPS = ("ttng.tensormap_create",)
TMEM_OPS = ("ttng.tmem_alloc",)


def _where(site: tuple[str, int, int] | None) -> str:
    return f"{site[0]}:{site[1]}:{site[2]}" if site else "?"


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


def _scan_counts(report: dict, by_line: dict[int, Site]) -> dict[tuple, list[dict]]:
    """The scan's accesses by (site, instruction name, TTGIR loop nest)."""
    out: dict[tuple, list[dict]] = defaultdict(list)
    for b in report.get("buffers", []):
        for a in b["accesses"]:
            if "instr" not in a:
                continue
            s = by_line.get(a["location"].get("ttgir_line", -1))
            if s is None:
                continue
            warps = s.partition[1] if s.partition else report.get("num_warps")
            out[(s.site, access_instr(a), s.loops)].append({**a, "buffer": b["buffer"], "warps": warps})
    return out


def _warps(o: SharedOp, warps: int) -> int:
    if o.active is not None and o.offsets is not None:
        return int(o.active.any(axis=1).sum())
    return int(o.reach.any(axis=1).sum()) if o.reach is not None else warps


def _instr_name(o: SharedOp) -> str:
    """The instruction an entry groups by: ``cp16`` for ``cp16.cg`` (the cache mode is listed apart)."""
    return o.name.split(".")[0] if o.family == "ldgsts" else o.name


def _ptx_wavefronts(ops: list[SharedOp]) -> tuple[int, int] | None:
    """Wavefronts and ideal of the instructions' known addresses (rows of the warps that run
    each; one model evaluation per instruction kind, the rows stacked)."""
    if any(o.offsets is None for o in ops):
        return None
    rows: dict[str, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
    for o in ops:
        run = o.active.any(axis=1)  # warps that execute it (a partition's, a branch's)
        if run.any():  # a cp.async's shared side is a store of its width
            name = _instr_name(o)
            rows[{"cp4": "st32", "cp8": "st64", "cp16": "st128"}.get(name, name)].append(
                (o.offsets[run], o.active[run])
            )
    wf = ideal = 0
    for name, parts in rows.items():
        c, i, _ = evaluate(instruction(name), np.concatenate([a for a, _ in parts]),
                           np.concatenate([b for _, b in parts]))  # fmt: skip
        wf, ideal = wf + int(c.sum()), ideal + int(i.sum())
    return wf, ideal


def build(report: dict, ttgir: str, ptx: str, args: dict[str, int] | None = None) -> dict:
    """The ledger of one compiled kernel (see the module docstring): ``entries``, ``unattributed``
    PTX instructions (no TTGIR op at their source location can account for them),
    ``disagreements`` (the scan's count and the PTX's addresses differ), and ``totals``."""
    kernel = parse_kernel(ptx)
    sites, _, arg_names = read_sites(ttgir)
    by_line = {s.line: s for s in sites}
    by_site: dict[tuple, list[Site]] = defaultdict(list)
    for s in sites:
        by_site[s.site].append(s)
    ops, ptx_loops = analyse(kernel)
    lmap = _loop_map(kernel, ptx_loops, sites)
    scan = _scan_counts(report, by_line)
    warps = max(1, kernel.threads // 32)

    def nest(o: SharedOp) -> tuple[Loop, ...] | None:
        if not o.loops:
            return ()
        if lmap is None:
            return None
        return tuple(lmap[i] for i in o.loops)

    # the PTX names one caller of an inlined function (``inlined_at``), the TTGIR the whole chain:
    # a location that only appears inside chains stands for the op's own (outermost) site
    callers: dict[tuple, set] = defaultdict(set)
    for s in sites:
        for e in s.chain[:-1]:
            callers[e].add(s.site)

    def site_of(loc: tuple) -> tuple:
        c = callers.get(loc, set())
        return next(iter(c)) if loc not in by_site and len(c) == 1 else loc

    groups: dict[tuple, list[SharedOp]] = defaultdict(list)
    for o in ops:
        groups[(site_of(o.ins.loc), o.family, _instr_name(o), o.loops, o.extra.get("ws_state", 0))].append(o)
    entries, unattributed, disagreements, loose = [], [], [], []
    all_names = {s.name for s in sites}
    func_loc = next((s.site for s in sites if s.name == "tt.return"), None)
    for (loc, fam, name, _, state), grp in groups.items():
        lp = nest(grp[0])
        here = by_site.get(loc, [])
        names = {s.name for s in here}
        entry = {
            "location": _where(loc),
            "family": fam,
            "instr": name,
            "ptx_lines": [o.ins.line for o in grp],
        }
        if fam == "ldgsts":
            entry["cache"] = sorted({o.name.split(".")[1] for o in grp})
        per_warp = len(grp)
        # warps that execute it: those with an active lane where the PTX says which (ptxas branches
        # around a shared access no lane of a warp makes: measured, descriptor zeroing), else those
        # whose control flow reaches it
        reach = sum(_warps(o, warps) for o in grp)
        entry["instructions_per_warp"] = per_warp
        entry["instructions"] = reach
        if lp is None:
            entry["loops"], entry["executions"] = None, None
            entry["executions_reason"] = "the PTX's loops do not match the TTGIR's scf.for nest"
        else:
            trips = [x.trips(args) for x in lp]
            entry["loops"] = [{"ttgir_line": x.line, "bounds": x.text(), "trips": t}
                              for x, t in zip(lp, trips, strict=True)]  # fmt: skip
            entry["executions"] = int(np.prod(trips)) if all(t is not None for t in trips) else None
            if entry["executions"] is None:
                entry["executions_reason"] = "per iteration: a loop's bounds are run-time values"
        if any(o.conditional for o in grp):
            entry["conditional"] = True
        if any(o.extra.get("exit_before") for o in grp):
            entry["note"] = EXIT_BEFORE
        if fam not in ("lsu", "ldgsts", "atomic"):
            owners = [n for n in FAMILY_OPS.get(fam, ()) if n in names]
            if not owners:  # Triton hoists some (tensor-memory allocation) or LLVM moves the line
                owners = [n for n in FAMILY_OPS.get(fam, ()) if n in all_names]
                entry["note"] = "the PTX gives another source line than the op's"
            if not owners:
                unattributed.append(f"{_where(loc)}: {per_warp} {name} ({fam}) with no TTGIR op to own it")
                continue
            entry.update({"op": owners[0], "kind": fam, "counted": False, "reason": NOT_COUNTED[fam]})
            entries.append(entry)
            if name == "tensormap.replace":
                entries += _tensormap_rule(entry, reach // max(1, per_warp))
            continue
        if state and "ttg.warp_specialize" in all_names and fam == "lsu":
            # the state word: the default warps store which partition each worker warp runs (and
            # then "exit"); each worker warp loads its byte once per store
            entry.update({"op": "ttg.warp_specialize", "kind": "scratch", "note": WS_STATE})
            wf = _ptx_wavefronts(grp)
            if name.startswith("ld") and entry["executions"] is not None:
                entry["executions"] *= state
            if wf is None:
                entry.update({"wavefronts": None, "reason": next(o.unknown for o in grp if o.unknown)})
            else:
                entry.update({"wavefronts": wf[0], "ideal": wf[1], "source": "ptx"})
            entry["counted"] = entry.get("wavefronts") is not None
            entries.append(entry)
            continue
        key = (loc, name, lp if lp is not None else ())
        if lp is None:  # loops not matched (warp-specialized partitions): match by line and instruction
            key = next((k for k in scan if k[0] == loc and k[1] == name), key)
        accesses = scan.pop(key, [])
        ptx_wf = _ptx_wavefronts(grp)
        if accesses:
            scan_per_warp = sum(a["instructions"] for a in accesses) // max(1, accesses[0]["warps"] or warps)
            entry["op"] = ", ".join(dict.fromkeys(a["op"] for a in accesses))
            entry["kind"] = "buffer"
            entry["buffers"] = sorted({a["buffer"] for a in accesses})
            if scan_per_warp != per_warp:
                others = [n for n in names if n in SCRATCH_OPS]
                if scan_per_warp > per_warp or not others:
                    disagreements.append(
                        f"{_where(loc)}: scan counts {scan_per_warp} {name} per warp, the PTX has {per_warp}"
                    )
                    entries.append({**entry, "wavefronts": None, "counted": False})
                    continue
                entry["op"] += " + " + ", ".join(others)  # a conversion shares the line
                entry["kind"] = "buffer+scratch"
            scan_wf = sum(a["wavefronts"] for a in accesses) * per_warp // max(1, scan_per_warp)
            scan_ideal = sum(a["ideal"] for a in accesses) * per_warp // max(1, scan_per_warp)
            if ptx_wf is not None:
                if entry["kind"] == "buffer" and ptx_wf[0] != scan_wf:
                    disagreements.append(
                        f"{_where(loc)}: {name} scan counts {scan_wf} wavefronts, PTX addresses {ptx_wf[0]}"
                    )
                entry["wavefronts"], entry["ideal"], entry["source"] = ptx_wf[0], ptx_wf[1], "ptx+scan"
            else:
                entry["wavefronts"], entry["ideal"], entry["source"] = scan_wf, scan_ideal, "scan"
                if entry["kind"] != "buffer":
                    entry["wavefronts"] = None
                    entry["reason"] = "a conversion shares the line and the PTX addresses are not known"
        else:
            owners = [n for n in names if n in SCRATCH_OPS] or [n for n in names if n in DESCRIPTOR_OPS]
            if not owners and loc == func_loc and any(n in all_names for n in TMEM_OPS):
                owners = list(TMEM_OPS)  # the tensor-memory base address, read back at kernel entry
            if not owners:
                loose.append((loc, name, lp, per_warp, entry, grp, ptx_wf))
                continue
            entry["op"] = ", ".join(sorted(set(owners)))
            entry["kind"] = ("descriptor" if owners[0] in DESCRIPTOR_OPS else
                             "tmem" if owners[0] in TMEM_OPS else "scratch")  # fmt: skip
            if ptx_wf is None and fam == "atomic":  # histogram bins: where each lane adds is data
                entry.update({"wavefronts": None, "counted": False, "reason": ATOMIC_REASON})
            elif ptx_wf is None:
                why = next(o.unknown for o in grp if o.unknown)
                entry.update({"wavefronts": None, "reason": why})
            else:
                entry["wavefronts"], entry["ideal"], entry["source"] = ptx_wf[0], ptx_wf[1], "ptx"
        entry.setdefault("counted", entry.get("wavefronts") is not None)
        entries.append(entry)
    ptx_locs = {site_of(o.ins.loc) for o in ops}
    for loc, name, lp, per_warp, entry, _grp, ptx_wf in loose:
        # LLVM gave the instructions another source line: claim them for a scan access of the same
        # instruction, loop nest and count whose own line has none
        key = next((k for k, acc in scan.items() if k[1] == name and k[2] == (lp or ()) and
                    sum(a["instructions"] for a in acc) // max(1, acc[0]["warps"] or warps) == per_warp),
                   None)  # fmt: skip
        if key is None:
            # or for a scratch op of the same loop nest none of whose PTX kept its own line
            # (LLVM sinks a conversion into the op that uses it)
            cands = {s.site: s.name for s in sites if s.name in SCRATCH_OPS and s.loops == (lp or ())
                     and s.site not in ptx_locs}  # fmt: skip
            if len(cands) != 1 or ptx_wf is None:
                unattributed.append(f"{_where(loc)}: {per_warp} {name} with no TTGIR op to own it")
                continue
            (site, op), = cands.items()
            entry.update({"op": op, "kind": "scratch", "wavefronts": ptx_wf[0], "ideal": ptx_wf[1],
                          "source": "ptx", "counted": True})  # fmt: skip
            entry["note"] = f"the PTX gives line {_where(loc)}; the op is at {_where(site)}"
            entries.append(entry)
            continue
        accesses = scan.pop(key)
        scan_wf = sum(a["wavefronts"] for a in accesses)
        entry["op"] = ", ".join(dict.fromkeys(a["op"] for a in accesses))
        entry["kind"] = "buffer"
        entry["buffers"] = sorted({a["buffer"] for a in accesses})
        entry["note"] = f"the PTX gives line {_where(loc)}; the op is at {_where(key[0])}"
        if ptx_wf is not None and ptx_wf[0] != scan_wf:
            disagreements.append(
                f"{_where(loc)}: {name} scan counts {scan_wf} wavefronts, PTX addresses {ptx_wf[0]}"
            )
        wf = ptx_wf or (scan_wf, sum(a["ideal"] for a in accesses))
        entry.update(
            {"wavefronts": wf[0], "ideal": wf[1], "source": "ptx+scan" if ptx_wf else "scan", "counted": True}
        )
        entries.append(entry)
    for (loc, name, _), accesses in scan.items():  # counted by the scan, absent from the PTX
        disagreements.append(
            f"{_where(loc)}: scan counts {name} for {accesses[0]['op']}, the PTX has none there"
        )
    for e in entries:
        if e.get("wavefronts") is not None and e.get("executions") is not None:
            e["total_wavefronts"] = e["wavefronts"] * e["executions"]
            e["total_instructions"] = e["instructions"] * e["executions"]
    return {
        "kernel": kernel.name,
        "threads": kernel.threads,
        "arguments": arg_names,
        "entries": entries,
        "unattributed": unattributed,
        "disagreements": disagreements,
        "totals": totals(entries),
    }


# Measured (gpu_checks/results/h100-2026-11-23-triton-kernels.json, 9 kernels, 3-4 descriptors
# each): filling one tensor map in shared memory (a ``tensormap.replace`` sequence, one warp) costs
# that warp 7 shared loads and 9 shared stores in SASS, one wavefront each, on top of the PTX's own
# ld/st. PTX has no ld/st for them, so they are a rule, not a count.
TENSORMAP_LSU = {"ld32": (7, 7), "st32": (9, 9)}  # instr -> (instructions, wavefronts) per warp


def _tensormap_rule(entry: dict, warps: int) -> list[dict]:
    out = []
    for instr, (n, wf) in TENSORMAP_LSU.items():
        row = {**entry, "family": "lsu", "instr": instr, "kind": "descriptor", "counted": True}
        row.update({"instructions_per_warp": n, "instructions": n * warps, "wavefronts": wf * warps})
        row.update({"ideal": n * warps, "source": "rule: tensormap.replace in SASS (measured)"})
        row["reason"] = "tensor-map fill lowered to shared loads and stores (measured rule)"
        out.append(row)
    return out


def op_class(entry: dict) -> str:
    """The Nsight Compute op class an entry's wavefronts are counted under."""
    name = entry["instr"]
    if entry["family"] == "ldgsts":
        return "ldgsts_bypass" if entry.get("cache") == ["cg"] else "ldgsts"
    return name.split(".")[0].rstrip("0123456789") if not name.startswith(("ldsm", "stsm")) else name[:4]


def totals(entries: list[dict]) -> dict:
    """Per CTA: wavefronts and instructions by op class (``ld``, ``st``, ``ldsm``, ``stsm``,
    ``ldgsts``, ``ldgsts_bypass``), ``None`` where an entry's count or executions are unknown."""
    out: dict[str, dict] = {}
    for e in entries:
        if not e.get("counted"):
            continue
        c = out.setdefault(op_class(e), {"wavefronts": 0, "instructions": 0})
        if c["wavefronts"] is None or "total_wavefronts" not in e:
            c["wavefronts"] = c["instructions"] = None
            continue
        c["wavefronts"] += e["total_wavefronts"]
        c["instructions"] += e["total_instructions"]
    return dict(sorted(out.items()))


def unchecked(ledger: dict) -> list[str]:
    """Ledger entries whose wavefronts are not known (a gate must not pass on them)."""
    return [
        f"{e['location']} {e['op']} {e['instr']}: wavefronts unknown ({e.get('reason', '')})"
        for e in ledger["entries"]
        if e["family"] in ("lsu", "ldgsts") and e.get("wavefronts") is None
    ]
