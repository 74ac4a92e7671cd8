"""The enumeration engine on warp instructions given as address tables rather than layouts: a
kernel's dynamic instances, a remap a fix tries, a ledger's rows, ``bankproof wavefronts``' cases.
Every row (one warp instruction: a byte address and an on/off per lane) goes through the target's
hardware model (:mod:`bankproof.models.hardware`, the measured atomic and copy rules); the readers
above count nothing themselves.

>>> import numpy as np
>>> from bankproof.models.hardware import instruction
>>> offs = np.array([[4 * 33 * i for i in range(32)], [128 * i for i in range(32)]])
>>> counts(instruction("ld32"), offs, np.ones((2, 32), bool))[0].tolist()
[1, 32]
"""

from __future__ import annotations

import json

import numpy as np
from bankproof.models import atomic_rule, copy_rule, hardware, target_single
from bankproof.models.hardware import instruction
from bankproof.verifier.results import Conflict

__all__ = [
    "atomic_conflict", "atomic_counts", "cases", "conflict", "copy_counts", "counts", "evaluate", "reads",
]  # fmt: skip


def evaluate(ins: hardware.Instr, offsets: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wavefronts and ideals of each row exactly as given (every lane's address read where on)."""
    c, i, _ = hardware.evaluate(ins, offsets, active)
    return c, i


def counts(ins: hardware.Instr, offsets: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wavefronts and ideals of each row under the phase model; an ldmatrix/stmatrix row reads the
    addresses of its address lanes only, whatever is on."""
    act = np.ones_like(active) if ins.is_matrix else active
    used = (np.arange(32) < ins.address_lanes)[None, :] if ins.is_matrix else active
    return evaluate(ins, np.where(used, offsets, 0), act)  # an unused lane's address is not read


def reads(width: int, addresses: np.ndarray, issues: np.ndarray) -> int:
    """Wavefronts of one warp load of ``width`` bytes per lane at ``addresses`` where ``issues``."""
    load = instruction(f"ld{width * 8}")
    return int(hardware.wavefront_counts(load, addresses[None], issues[None])[0])


def cases(arch: str, instr: str, offsets: np.ndarray, active: np.ndarray) -> list[tuple]:
    """``bankproof wavefronts``' rows of one instruction kind: ``(wavefronts or None, ideal, groups
    or None, status)`` each (:func:`~bankproof.models.target_single.instruction_cases`)."""
    return target_single.instruction_cases(arch, instr, offsets, active)


def conflict(
    ins: hardware.Instr, warp: int, execution: int, offs: np.ndarray, act: np.ndarray, count: int, ideal: int
) -> Conflict:
    """The lowest two lanes of one warp instruction (``offs``, ``act``: per lane) that one bank
    serves different words in one phase, with the line that replays it."""
    act = act.copy()
    if ins.is_matrix:
        act = np.arange(32) < ins.address_lanes
    offs = np.where(act, offs, 0)  # an unused lane's address is not read (nor shown)
    phase = hardware.phase_ids(ins, offs[None], act[None])[0]
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
                    return _conflict(warp, execution, (a, c), offs, b, int(p), count, ideal, case)
                seen.setdefault(b, (word, lane))
    raise AssertionError("no conflicting pair in an instruction above its ideal")


def atomic_counts(
    offsets: np.ndarray, active: np.ndarray, increment: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Wavefronts and ideals of a measured shared atomic's rows (:mod:`~bankproof.models.atomic_rule`:
    the most active lanes on one bank, or for ATOMS.POPC.INC the most distinct words on one bank;
    ideal one where a lane is on)."""
    rows = zip(offsets, active)
    rule = atomic_rule.increment_wavefronts if increment else atomic_rule.atomic_wavefronts
    cnt = np.fromiter((rule(o, a) for o, a in rows), np.int64, len(offsets))
    return cnt, active.any(axis=1).astype(np.int64)


def atomic_conflict(
    name: str,
    warp: int,
    execution: int,
    offs: np.ndarray,
    act: np.ndarray,
    count: int,
    increment: bool = False,
) -> Conflict:
    """Two active lanes of one atomic that it serializes on one bank."""
    a, c = (atomic_rule.increment_pair if increment else atomic_rule.pair)(offs, act) or (0, 0)
    # an increment's rule is a 32-bit load's (distinct words a bank): its reproduce line counts as one
    instr = "ld32" if increment else name.replace("red.", "atom.")
    case: dict = {"instr": instr, "byte_offsets": np.where(act, offs, 0).tolist()}
    if not act.all():
        case["active"] = [bool(x) for x in act]
    return _conflict(warp, execution, (a, c), offs, int(offs[a]) // 4 % hardware.BANKS, 0, count, 1, case)


def _conflict(
    warp: int, execution: int, lanes: tuple[int, int], offs: np.ndarray, bank: int, phase: int,
    count: int, ideal: int, case: dict,
) -> Conflict:  # fmt: skip
    line = json.dumps(case, separators=(",", ":"))
    a, c = lanes
    return Conflict(
        lanes=(a, c),
        warp=warp,
        byte_addresses=(int(offs[a]), int(offs[c])),
        bank=bank,
        phase=phase,
        wavefronts=count,
        ideal=ideal,
        reproduce=f"echo '{line}' | bankproof wavefronts --input -",
        execution=execution,
        threads=(32 * warp + a, 32 * warp + c),
    )


def copy_counts(
    name: str,
    offsets: np.ndarray,
    active: np.ndarray,
    known: np.ndarray,
    source: np.ndarray | None,
    source_known: np.ndarray | None,
    zfill: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``cp.async`` rows: wavefronts (``-1`` unknown), ideals, which are known, and the status.
    ``.ca``: the measured rule (:func:`~bankproof.models.copy_rule.ldgsts_wavefronts`: the larger of
    the store's wavefronts and the L1 bank conflicts of the global reads), which needs the global
    addresses (``source``); a lane whose src-size is 0 (zero-fill) reads nothing; ``.cg``: as the
    store of the same width (assumed, as everywhere), except in the zero-fill form (``zfill``: a
    src-size operand), whose measured count is not the store's."""
    width, mode = int(name[2:].split(".")[0]), name.split(".")[1]
    store = instruction({4: "st32", 8: "st64", 16: "st128"}[width])
    c, ideal = counts(store, offsets, active)
    if mode == "cg":
        if zfill:  # the zero-fill form (a src-size operand): not modelled
            return np.full(len(c), -1, dtype=np.int64), ideal, np.zeros(len(c), bool), "not modelled"
        return c, ideal, known.copy(), "assumed"
    out = np.full(len(c), -1, dtype=np.int64)
    ok = known.copy()
    for r in range(len(c)):
        if not ok[r] or source is None or not source_known[r][active[r]].all():
            ok[r] = False
            continue
        w = copy_rule.ldgsts_wavefronts(width, offsets[r], source[r], active[r])
        if w is None:  # (zero-fill lanes, src-size 0, have a negative source: they read nothing)
            ok[r] = False
        else:
            out[r] = w
    return out, ideal, ok, "measured"
