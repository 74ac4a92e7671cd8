"""From the machine's trace to costs: every dynamic instance of a shared-memory instruction counted
by the target's model (the same :mod:`bankproof.models.hardware` every other command uses), a
verdict per static instruction over all its instances, the first conflicting pair of lanes where
there is one, and which instructions a point the machine could not follow makes unknown.

>>> import numpy as np
>>> offs = np.array([[4 * 33 * i for i in range(32)], [128 * i for i in range(32)]])
>>> counts(instruction("ld32"), offs, np.ones((2, 32), bool))[0].tolist()
[1, 32]
"""

from __future__ import annotations

import json

import numpy as np
from bankproof.models import atomic_rule, copy_rule, hardware, target
from bankproof.models.hardware import instruction
from bankproof.verifier.kernel.records import Conflict, Instances
from bankproof.verifier.ptx.module import KernelCode

ZFILL_CG = (
    "cp.async.cg with zero-fill (a src-size operand): Nsight Compute's count of these copies is not the "
    "store's (4x it on some, equal on others, in one Triton fp8 matmul on an H100: "
    "gpu_checks/results/h100-2026-11-28-kernel-truth-2.json.gz), so it is not modelled"
)
TMA_NOTE = (
    "TMA copies add no LSU shared wavefronts (measured: gpu_checks/results/h100-2026-11-27-engines.json.gz)"
)


def counts(ins: hardware.Instr, offsets: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wavefronts and ideals of each row (a warp instruction) under the phase model."""
    act = np.ones_like(active) if ins.is_matrix else active
    used = (np.arange(32) < ins.address_lanes)[None, :] if ins.is_matrix else active
    c, i, _ = hardware.evaluate(ins, np.where(used, offsets, 0), act)  # an unused lane's address is not read
    return c, i


LARGEST_SMEM = 232448  # sm90's largest shared memory per block (227 KB): no launch has more


def shared_window(code: KernelCode, symbols: dict[str, int], dynamic: int) -> int:
    """The CTA's shared memory in bytes: its static variables as placed, and the dynamic array;
    where an ``extern`` array is declared and no dynamic size given, the largest any launch has.

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module(".visible .entry k() { .shared .align 4 .b8 a[100]; ret; }"), None)
    >>> shared_window(code, {"a": 0}, 256)
    368
    """
    end, extern = 0, False
    for s in code.shared:
        at = symbols.get(s.name, 0)
        extern |= s.size is None
        end = max(end, at + (s.size if s.size is not None else dynamic or LARGEST_SMEM))
    return end if extern or not dynamic else -(-end // 16) * 16 + dynamic  # no extern array: they follow


def outside(ins: hardware.Instr, inst: Instances, window: int) -> tuple[int, int] | None:
    """The first (row, lane) whose address lies outside the CTA's ``window`` bytes of shared memory
    (below 0, or its bytes past the end), else ``None``: no GPU executes it as counted."""
    lanes = ins.address_lanes
    width = 16 if ins.is_matrix else ins.width
    act = (np.ones_like(inst.active) if ins.is_matrix else inst.active)[:, :lanes] & inst.known[:, None]
    offs = inst.offsets[:, :lanes]
    bad = ((offs < 0) | (offs + width > window)) & act
    rows = np.flatnonzero(bad.any(axis=1))
    if not rows.size:
        return None
    row = int(rows[0])
    return row, int(np.flatnonzero(bad[row])[0])


def misaligned(ins: hardware.Instr, inst: Instances) -> int | None:
    """The first row where an active lane's address breaks the instruction's alignment (the
    hardware faults: a misaligned address error), else ``None``."""
    align = 16 if ins.is_matrix else ins.width
    lanes = ins.address_lanes
    act = np.ones_like(inst.active) if ins.is_matrix else inst.active
    bad = ((inst.offsets[:, :lanes] % align) != 0) & act[:, :lanes] & inst.known[:, None]
    bad |= (inst.offsets[:, :lanes] < 0) & act[:, :lanes] & inst.known[:, None]
    rows = np.flatnonzero(bad.any(axis=1))
    return int(rows[0]) if rows.size else None


def copy_counts(
    name: str, inst: Instances, zfill: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``cp.async`` rows: wavefronts (``-1`` unknown), ideals, which are known, and the status.
    ``.ca``: the measured rule (:func:`~bankproof.models.copy_rule.ldgsts_wavefronts`: the larger of
    the store's wavefronts and the L1 bank conflicts of the global reads), which needs the global
    addresses; a lane whose src-size is 0 (zero-fill) reads nothing; ``.cg``: as the store of the same width
    (assumed, as everywhere), except in the zero-fill form (``zfill``: a src-size operand), whose
    measured count is not the store's (:data:`ZFILL_CG`)."""
    width, mode = int(name[2:].split(".")[0]), name.split(".")[1]
    store = instruction({4: "st32", 8: "st64", 16: "st128"}[width])
    c, ideal = counts(store, inst.offsets, inst.active)
    if mode == "cg":
        if zfill:  # the zero-fill form (a src-size operand): see ZFILL_CG
            return np.full(len(c), -1, dtype=np.int64), ideal, np.zeros(len(c), bool), "not modelled"
        return c, ideal, inst.known.copy(), "assumed"
    out = np.full(len(c), -1, dtype=np.int64)
    ok = inst.known.copy()
    for r in range(len(c)):
        if not ok[r] or inst.source is None or not inst.source_known[r][inst.active[r]].all():
            ok[r] = False
            continue
        w = copy_rule.ldgsts_wavefronts(width, inst.offsets[r], inst.source[r], inst.active[r])
        if w is None:  # (zero-fill lanes, src-size 0, have a negative source: they read nothing)
            ok[r] = False
        else:
            out[r] = w
    return out, ideal, ok, "measured"


def conflict(ins: hardware.Instr, inst: Instances, row: int, count: int, ideal: int) -> Conflict:
    """The lowest two lanes of row ``row`` that one bank serves different words in one phase."""
    offs, act = inst.offsets[row], inst.active[row].copy()
    if ins.is_matrix:
        act = np.arange(32) < ins.address_lanes
    offs = np.where(act, offs, 0)  # an unused lane's address is not read (nor shown)
    phase = hardware.phase_ids(ins, offs[None], act[None])[0]
    warp = int(inst.warp[row])
    for p in sorted(set(phase[act].tolist())):
        seen: dict[int, tuple[int, int]] = {}
        for lane in np.flatnonzero(act & (phase == p)).tolist():
            for word in ins.words(int(offs[lane])):
                b = word % hardware.BANKS
                if b in seen and seen[b][0] != word:
                    a, c = seen[b][1], lane
                    case = {"instr": ins.short, "byte_offsets": offs.tolist()}
                    if not act.all() and not ins.is_matrix:  # a matrix op's unused lanes are not inactive
                        case["active"] = [bool(x) for x in act]
                    line = json.dumps(case, separators=(",", ":"))
                    return Conflict(
                        warp,
                        int(inst.execution[row]),
                        (a, c),
                        (32 * warp + a, 32 * warp + c),
                        (int(offs[a]), int(offs[c])),
                        b,
                        int(p),
                        count,
                        ideal,
                        f"echo '{line}' | bankproof wavefronts --input -",
                    )
                seen.setdefault(b, (word, lane))
    raise AssertionError("no conflicting pair in an instruction above its ideal")


def atomic_counts(inst: Instances) -> tuple[np.ndarray, np.ndarray]:
    """Wavefronts and ideals of a measured shared atomic's rows (:mod:`~bankproof.models.atomic_rule`:
    the most active lanes on one bank; ideal one where a lane is on)."""
    rows = zip(inst.offsets, inst.active)
    cnt = np.fromiter((atomic_rule.atomic_wavefronts(o, a) for o, a in rows), np.int64, len(inst.offsets))
    return cnt, inst.active.any(axis=1).astype(np.int64)


def atomic_conflict(name: str, inst: Instances, row: int, count: int) -> Conflict:
    """Two active lanes of row ``row`` that the atomic serializes on one bank."""
    offs, act = inst.offsets[row], inst.active[row]
    a, c = atomic_rule.pair(offs, act) or (0, 0)
    case: dict = {"instr": name.replace("red.", "atom."), "byte_offsets": np.where(act, offs, 0).tolist()}
    if not act.all():
        case["active"] = [bool(x) for x in act]
    warp, line = int(inst.warp[row]), json.dumps(case, separators=(",", ":"))
    return Conflict(warp, int(inst.execution[row]), (a, c), (32 * warp + a, 32 * warp + c),
                    (int(offs[a]), int(offs[c])), int(offs[a]) // 4 % hardware.BANKS, 0, count, 1,
                    f"echo '{line}' | bankproof wavefronts --input -")  # fmt: skip


def status(arch: str, ins: hardware.Instr) -> str:
    return target.status(arch, ins)


def reachable(code: KernelCode, starts: list[int]) -> set[int]:
    """Instruction indices reachable from ``starts`` (every way a branch can go)."""
    body, n = code.body, len(code.body)
    entries = sorted((f.entry, name) for name, f in code.functions.items())
    sites: dict[str, list[int]] = {}  # function -> the instructions after its call sites
    for op in body:
        if op.base == "call":
            name = next((o for o in op.operands if not o.startswith("(")), "")
            sites.setdefault(name, []).append(op.index + 1)
    seen: set[int] = set()
    todo = list(starts)
    while todo:
        i = todo.pop()
        if i in seen or i >= n:
            continue
        seen.add(i)
        op = body[i]
        nxt = []
        if op.base == "bra":
            name = op.operands[-1] if op.operands else ""
            t = code.labels.get(f"{name}@{op.scope}", code.labels.get(name))
            if t is not None:
                nxt.append(t)
            if op.guard is not None:
                nxt.append(i + 1)
        elif op.base == "brx":
            nxt += [code.labels[x] for x in code.tables.get(op.operands[-1], ()) if x in code.labels]
        elif op.base == "ret" and entries and i >= entries[0][0]:  # back to every call site of its function
            owner = [name for entry, name in entries if entry <= i][-1]
            nxt += sites.get(owner, [])
            if op.guard is not None:
                nxt.append(i + 1)
        elif op.base in ("ret", "exit", "trap") and op.guard is None:
            pass
        else:
            nxt.append(i + 1)
        todo += nxt
    return seen


def why_unknown(fam: str, inst, ok, name: str = "") -> str:
    """Why an instruction's count is not decided (its reason in the report)."""
    if not inst.known.all():
        return (
            "an address or guard depends on values the analysis does not know "
            "(loaded data, an argument not given)"
        )
    if fam == "ldgsts" and name.endswith("cg"):
        return ZFILL_CG
    if fam == "ldgsts":
        span = _copy_span(name, inst)
        if span is not None:
            return (f"cp.async.ca whose global-side and shared-side bank conflicts cross: measured between "
                    f"{span[0]} and {span[1]} wavefronts in all (models/copy_rule.py)")  # fmt: skip
        return (
            "cp.async.ca: lanes copying to one shared address, or global addresses not known (not modelled)"
        )
    return "not decided"


def _copy_span(name: str, inst) -> tuple[int, int] | None:
    """The measured range of a ``.ca`` copy's instances where their sides' conflicts cross."""
    if inst.source is None:
        return None
    width, lo, hi = int(name[2:].split(".")[0]), 0, 0
    for r in range(len(inst.warp)):
        if not inst.source_known[r][inst.active[r]].all():
            return None
        got = copy_rule.ldgsts_range(width, inst.offsets[r], inst.source[r], inst.active[r])
        if got is None:
            return None
        lo, hi = lo + got[0], hi + got[1]
    return lo, hi
