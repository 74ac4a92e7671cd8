"""The ledger's rules, one per kind of owner: each takes a group of PTX shared-memory instructions
(one source location, instruction, loop nest) and, when the group is its kind, writes its entry.

- :func:`engine_rule`: TMA, tensor-core operand reads, mbarrier, tensor-map and tensor-memory
  instructions, listed with their op and not counted in LSU wavefronts;
- :func:`ws_state_rule`: the warp-specialize state word (which partition each worker warp runs);
- :func:`buffer_rule`: an explicit buffer's access, the scan's layout count (and the PTX's
  addresses where they are known: the two must agree);
- :func:`scratch_rule`: scratch of reductions, scans, conversions, descriptor creation and the
  tensor-memory base, counted from the PTX's addresses;
- :func:`claim_moved`: groups LLVM gave another source line, claimed by a scan access or a
  scratch op of the same loop nest.

>>> where_text(("k.py", 7, 3))
'k.py:7:3'
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from bankproof.models.hardware import instruction
from bankproof.verifier.engine import tables
from bankproof.verifier.ptx import SharedOp
from bankproof.verifier.triton.scan_records import AccessRow
from bankproof.verifier.triton.sites import Loop, Site

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


def where_text(site: tuple[str, int, int] | None) -> str:
    return f"{site[0]}:{site[1]}:{site[2]}" if site else "?"


def warps_of(o: SharedOp, warps: int) -> int:
    if o.active is not None:  # warps with a lane on (ncu counts no instruction of the others)
        return int(o.active.any(axis=1).sum())
    return int(o.reach.any(axis=1).sum()) if o.reach is not None else warps


def instr_name(o: SharedOp) -> str:
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
            name = instr_name(o)
            rows[{"cp4": "st32", "cp8": "st64", "cp16": "st128"}.get(name, name)].append(
                (o.offsets[run], o.active[run])
            )
    wf = ideal = 0
    for name, parts in rows.items():
        c, i = tables.evaluate(instruction(name), np.concatenate([a for a, _ in parts]),
                               np.concatenate([b for _, b in parts]))  # fmt: skip
        wf, ideal = wf + int(c.sum()), ideal + int(i.sum())
    return wf, ideal


GMMA_NOTE = (
    "op_gmma: each warpgroup wgmma reads its shared operands' bytes / 128 wavefronts (A only when "
    "from shared memory): measured so, ideal = measured, on NVMMA-swizzled operands "
    "(gpu_checks/results/h200-2026-11-26-profile-exports.json); other layouts assumed conflict-free"
)
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "f8f6f4": 8, "b1": 1}


def wgmma_bytes(opcode: str, operands: list[str]) -> int:
    """Shared bytes one ``wgmma.mma_async`` reads: B (N x K), and A (M x K) when its operand is a
    descriptor rather than registers.

    >>> wgmma_bytes("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ["{%r1}", "%rd1", "%rd2"])
    4096
    >>> wgmma_bytes("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ["{%r1}", "{%r2}", "%rd2"])
    2048
    """
    parts = opcode.split(".")
    shape = next((p for p in parts if re.fullmatch(r"m\d+n\d+k\d+", p)), "m64n8k16")
    m, n, k = (int(x) for x in re.findall(r"\d+", shape))
    a_bits, b_bits = (_BITS.get(p, 16) for p in parts[-2:])
    a_regs = len(operands) > 1 and operands[1].lstrip().startswith("{")
    return n * k * b_bits // 8 + (0 if a_regs else m * k * a_bits // 8)


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


@dataclass(frozen=True)
class ScanClaim:
    """A scan access a ledger entry may own: the access, its buffer, and the warps that run it
    (a warp-specialize partition's; ``None``: the kernel's)."""

    access: AccessRow
    buffer: str
    warps: int | None


@dataclass
class Ledger:
    """What a build accumulates, and what every rule reads: the scan's accesses not yet claimed
    (by site, instruction, loop nest), the kernel's TTGIR sites, and the warps per CTA."""

    scan: dict[tuple, list[ScanClaim]]
    sites: list[Site]
    warps: int
    by_site: dict[tuple, list[Site]] = field(default_factory=dict)
    all_names: set[str] = field(default_factory=set)
    func_loc: tuple | None = None
    entries: list[dict] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    moved: list[Group] = field(default_factory=list)  # groups no op at their own line owns

    def __post_init__(self) -> None:
        by_site: dict[tuple, list[Site]] = defaultdict(list)
        for s in self.sites:
            by_site[s.site].append(s)
        self.by_site = dict(by_site)
        self.all_names = {s.name for s in self.sites}
        self.func_loc = next((s.site for s in self.sites if s.name == "tt.return"), None)


@dataclass
class Group:
    """One group of PTX instructions and its entry as far as every rule agrees on it."""

    loc: tuple
    family: str
    name: str
    state: int  # the warp-specialize state value the group stores or loads (0: none)
    ops: list[SharedOp]
    loops: tuple[Loop, ...] | None  # the TTGIR loop nest (None: the PTX's loops did not match)
    names: set[str]  # the TTGIR ops at its source location
    entry: dict

    @property
    def per_warp(self) -> int:
        return len(self.ops)

    @cached_property
    def ptx_wf(self) -> tuple[int, int] | None:
        """Wavefronts and ideal from the PTX's addresses (None where they are not all known)."""
        return _ptx_wavefronts(self.ops)


def engine_rule(g: Group, led: Ledger) -> bool:
    """TMA, tensor-core, mbarrier, tensor-map and tensor-memory instructions: listed with their op."""
    if g.family in ("lsu", "ldgsts", "atomic"):
        return False
    entry = g.entry
    owners = [n for n in FAMILY_OPS.get(g.family, ()) if n in g.names]
    if not owners:  # Triton hoists some (tensor-memory allocation) or LLVM moves the line
        owners = [n for n in FAMILY_OPS.get(g.family, ()) if n in led.all_names]
        entry["note"] = "the PTX gives another source line than the op's"
    if not owners:
        led.unattributed.append(
            f"{where_text(g.loc)}: {g.per_warp} {g.name} ({g.family}) with no TTGIR op to own it"
        )
        return True
    entry.update({"op": owners[0], "kind": g.family, "counted": False, "reason": NOT_COUNTED[g.family]})
    if g.name == "wgmma":
        gmma = sum(warps_of(o, led.warps) * wgmma_bytes(o.ins.opcode, o.ins.operands) for o in g.ops)
        entry["gmma_wavefronts"] = None if gmma is None else gmma // (128 * 4)
        entry["gmma_note"] = GMMA_NOTE
    led.entries.append(entry)
    if g.name == "tensormap.replace":
        led.entries.extend(_tensormap_rule(entry, entry["instructions"] // max(1, g.per_warp)))
    return True


def ws_state_rule(g: Group, led: Ledger) -> bool:
    """The state word: the default warps store which partition each worker warp runs (and then
    "exit"); each worker warp loads its byte once per store."""
    if not (g.state and "ttg.warp_specialize" in led.all_names and g.family == "lsu"):
        return False
    entry = g.entry
    entry.update({"op": "ttg.warp_specialize", "kind": "scratch", "note": WS_STATE})
    if g.name.startswith("ld") and entry["executions"] is not None:
        entry["executions"] *= g.state
    if g.ptx_wf is None:
        entry.update({"wavefronts": None, "reason": next(o.unknown for o in g.ops if o.unknown)})
    else:
        entry.update({"wavefronts": g.ptx_wf[0], "ideal": g.ptx_wf[1], "source": "ptx"})
    entry["counted"] = entry.get("wavefronts") is not None
    led.entries.append(entry)
    return True


def buffer_rule(g: Group, led: Ledger) -> bool:
    """An explicit buffer's access: the scan's count, checked against the PTX's addresses."""
    key = (g.loc, g.name, g.loops if g.loops is not None else ())
    if g.loops is None:  # loops not matched (warp-specialized partitions): match by line and instruction
        key = next((k for k in led.scan if k[0] == g.loc and k[1] == g.name), key)
    accesses = led.scan.pop(key, [])
    if not accesses:
        return False
    entry, per_warp, name = g.entry, g.per_warp, g.name
    scan_per_warp = _per_warp(accesses, led.warps)
    _owned_by_scan(entry, accesses)
    if scan_per_warp != per_warp:
        others = [n for n in g.names if n in SCRATCH_OPS]
        if scan_per_warp > per_warp or not others:
            led.disagreements.append(
                f"{where_text(g.loc)}: scan counts {scan_per_warp} {name} per warp, the PTX has {per_warp}"
            )
            led.entries.append({**entry, "wavefronts": None, "counted": False})
            return True
        entry["op"] += " + " + ", ".join(others)  # a conversion shares the line
        entry["kind"] = "buffer+scratch"

    def scaled(key: str, accs: list[ScanClaim], default: str | None = None) -> int:
        """The accesses' count of ``key`` at the PTX's instructions per warp (the scan's may merge)."""

        def of(a: ScanClaim) -> int:
            own = getattr(a.access, key)
            return own if own is not None else getattr(a.access, default or key) or 0

        return sum(of(a) for a in accs) * per_warp // max(1, scan_per_warp)

    scan_wf, scan_ideal = scaled("wavefronts", accesses), scaled("ideal", accesses)
    if any(a.access.wavefronts_max is not None for a in accesses):  # cp.async rows under a line: a bound
        entry["wavefronts_max"] = scaled("wavefronts_max", accesses, "wavefronts")
        entry["lines_note"] = next(a.access.lines_note for a in accesses if a.access.lines_note)
    if g.ptx_wf is not None:
        if entry["kind"] == "buffer" and g.ptx_wf[0] != scan_wf and entry.get("executions") != 0:
            led.disagreements.append(
                f"{where_text(g.loc)}: {name} scan counts {scan_wf} wavefronts, PTX addresses {g.ptx_wf[0]}"
            )
        entry["wavefronts"], entry["ideal"], entry["source"] = g.ptx_wf[0], g.ptx_wf[1], "ptx+scan"
    else:
        entry["wavefronts"], entry["ideal"], entry["source"] = scan_wf, scan_ideal, "scan"
        if entry["kind"] != "buffer":
            entry["wavefronts"] = None
            entry["reason"] = "a conversion shares the line and the PTX addresses are not known"
    guarded = [a for a in accesses if a.access.unguarded_wavefronts is not None]
    if guarded and entry.get("cache") == ["cg"] and entry.get("wavefronts") is not None:
        live, every = scaled("wavefronts", guarded), scaled("unguarded_wavefronts", guarded)
        entry["ncu_reads"] = [entry["wavefronts"] - live, entry["wavefronts"] - live + every]
    entry.setdefault("counted", entry.get("wavefronts") is not None)
    led.entries.append(entry)
    return True


def scratch_rule(g: Group, led: Ledger) -> bool:
    """Scratch of a TTGIR op at the group's line (or the tensor-memory base at kernel entry),
    counted from the PTX's addresses; a group no op owns waits for :func:`claim_moved`."""
    owners = [n for n in g.names if n in SCRATCH_OPS] or [n for n in g.names if n in DESCRIPTOR_OPS]
    if not owners and g.loc == led.func_loc and any(n in led.all_names for n in TMEM_OPS):
        owners = list(TMEM_OPS)  # the tensor-memory base address, read back at kernel entry
    if not owners:
        led.moved.append(g)
        return True
    entry = g.entry
    entry["op"] = ", ".join(sorted(set(owners)))
    entry["kind"] = ("descriptor" if owners[0] in DESCRIPTOR_OPS else
                     "tmem" if owners[0] in TMEM_OPS else "scratch")  # fmt: skip
    if g.ptx_wf is None and g.family == "atomic":  # histogram bins: where each lane adds is data
        entry.update({"wavefronts": None, "counted": False, "reason": ATOMIC_REASON})
    elif g.ptx_wf is None:
        entry.update({"wavefronts": None, "reason": next(o.unknown for o in g.ops if o.unknown)})
    else:
        entry["wavefronts"], entry["ideal"], entry["source"] = g.ptx_wf[0], g.ptx_wf[1], "ptx"
    entry.setdefault("counted", entry.get("wavefronts") is not None)
    led.entries.append(entry)
    return True


def _owned_by_scan(entry: dict, accesses: list[ScanClaim]) -> None:
    """The entry belongs to the scan's buffer accesses: their ops and buffers."""
    entry["op"] = ", ".join(dict.fromkeys(a.access.op for a in accesses))
    entry["kind"] = "buffer"
    entry["buffers"] = sorted({a.buffer for a in accesses})


def _per_warp(accesses: list[ScanClaim], warps: int) -> int:
    """The scan's instructions per warp for the accesses at one site."""
    return sum(a.access.instructions or 0 for a in accesses) // max(1, accesses[0].warps or warps)


RULES = (engine_rule, ws_state_rule, buffer_rule, scratch_rule)  # the first that owns a group writes it


def claim_moved(led: Ledger, ptx_locs: set) -> None:
    """LLVM gave these groups another source line: claim each for a scan access of the same
    instruction, loop nest and count whose own line has none, or for the one scratch op of the
    same loop nest none of whose PTX kept its own line (LLVM sinks a conversion into its user)."""
    for g in led.moved:
        entry, lp, name = g.entry, g.loops, g.name
        same = [k for k, acc in led.scan.items() if k[1] == name and k[2] == (lp or ())
                and _per_warp(acc, led.warps) == g.per_warp]  # fmt: skip
        key = same[0] if same else None
        if key is None:
            cands = {s.site: s.name for s in led.sites if s.name in SCRATCH_OPS and s.loops == (lp or ())
                     and s.site not in ptx_locs}  # fmt: skip
            if len(cands) != 1 or g.ptx_wf is None:
                where = where_text(g.loc)
                led.unattributed.append(f"{where}: {g.per_warp} {name} with no TTGIR op to own it")
                continue
            ((site, op),) = cands.items()
            entry.update({"op": op, "kind": "scratch", "wavefronts": g.ptx_wf[0], "ideal": g.ptx_wf[1],
                          "source": "ptx", "counted": True})  # fmt: skip
            entry["note"] = f"the PTX gives line {where_text(g.loc)}; the op is at {where_text(site)}"
            led.entries.append(entry)
            continue
        accesses = led.scan.pop(key)
        scan_wf = sum(a.access.wavefronts or 0 for a in accesses)
        _owned_by_scan(entry, accesses)
        entry["note"] = f"the PTX gives line {where_text(g.loc)}; the op is at {where_text(key[0])}"
        if g.ptx_wf is not None and g.ptx_wf[0] != scan_wf and entry.get("executions") != 0:
            led.disagreements.append(
                f"{where_text(g.loc)}: {name} scan counts {scan_wf} wavefronts, PTX addresses {g.ptx_wf[0]}"
            )
        wf = g.ptx_wf or (scan_wf, sum(a.access.ideal or 0 for a in accesses))
        source = "ptx+scan" if g.ptx_wf else "scan"
        entry.update({"wavefronts": wf[0], "ideal": wf[1], "source": source, "counted": True})
        led.entries.append(entry)
