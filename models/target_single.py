"""Single warp instructions on a target (``bankproof wavefronts``): each instruction's count,
ideal, wavefront groups and what the answer rests on, on the phase model or a lane-group target.

>>> wavefronts("ld32", [i * 128 for i in range(32)]).count
32
"""

from __future__ import annotations

import numpy as np
from bankproof.models import atomic_rule, hardware, lds
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.target import MEASURED, UNMODELED_REASON, get, rule, status, unmeasured


def instruction_cases(arch: str, instr: str, offsets: np.ndarray, active: np.ndarray) -> list[tuple]:
    """``(wavefronts or None, ideal, groups or None, status)`` of each warp instruction of one
    kind on ``arch`` (``offsets``/``active``: ``(N, warp)``)."""
    t = get(arch)
    if instr in atomic_rule.INSTRS:
        return _atomic_cases(arch, instr, offsets, active)
    if t.model == "lane groups":
        r = rule(arch, instr)
        if r.groups is None:
            return [(None, 0, None, "unknown")] * len(offsets)
        counts, ideals = lds.evaluate(r, offsets)
        groups = tuple(np.flatnonzero(r.groups == g).tolist() for g in range(r.ngroups))
        return [(int(c), int(i), groups, t.status) for c, i in zip(counts, ideals)]
    try:
        ins = hardware.instruction(instr)
    except InputError as e:
        raise InputError("wavefronts", "instr", e.problem, e.value) from None
    if ins.min_arch > t.cc:
        raise InputError("wavefronts", "instr", f"needs sm{ins.min_arch} or newer", f"{ins.name} on {arch}")
    counts, ideals, groups = hardware.evaluate(ins, offsets, active, groups=True)
    unknown = unmeasured(t, ins, offsets, active)
    st = status(arch)
    return [
        (None, int(ideals[j]), None, "unknown")
        if unknown[j]
        else (int(counts[j]), int(ideals[j]), groups[j], st)
        for j in range(len(offsets))
    ]


def _atomic_cases(arch: str, instr: str, offsets: np.ndarray, active: np.ndarray) -> list[tuple]:
    """A measured 32-bit shared atomic (``atom.add.u32``, ...): the most active lanes on one bank,
    ideal one; measured on sm90 (:mod:`~bankproof.models.atomic_rule`), assumed on other phase-model archs.

    >>> _atomic_cases("sm90", "atom.add.u32", np.zeros((1, 32), int), np.ones((1, 32), bool))[0][0]
    32
    """
    t = get(arch)
    if t.model != "phases":
        raise InputError(
            "wavefronts", "instr", f"is a shared atomic of the phase-model archs, not {arch}", instr
        )
    bad = offsets[(offsets % 4 != 0) & active]
    if bad.size:
        raise InputError("wavefronts", "byte_offsets", f"must be 4-byte aligned for {instr}", int(bad[0]))
    st = atomic_rule.status(arch)
    out = []
    for offs, act in zip(offsets, active):
        groups = atomic_rule.groups(offs, act)  # one a wavefront
        out.append((len(groups), int(act.any()), groups, st))
    return out


def wavefronts(
    instr: str | hardware.Instr, byte_offsets, active=None, arch: str = DEFAULT_ARCH
) -> hardware.Wavefronts:
    """Wavefronts of one warp instruction of the phase model, with its phases and wavefront groups.

    >>> wavefronts("ld32", [i * 128 for i in range(32)]).count
    32
    >>> w = wavefronts("ld128", [0] * 32)
    >>> w.count, w.ideal, wavefronts("st128", [0] * 32).count
    (2, 2, 4)
    """
    t = get(arch, "wavefronts")
    if t.model != "phases":
        raise InputError("wavefronts", "arch", "must be an arch of the phase model here", arch)
    ins = instr if isinstance(instr, hardware.Instr) else hardware.instruction(instr)
    if ins.min_arch > t.cc:
        raise InputError("wavefronts", "instr", f"needs sm{ins.min_arch} or newer", f"{ins.name} on {arch}")
    w = hardware.one_instruction(ins, byte_offsets, active)
    if t.status == "measured":
        return w
    offs = np.asarray(byte_offsets, dtype=np.int64)[None]
    act = np.ones(offs.shape, dtype=bool) if active is None else np.asarray(active, dtype=bool)[None]
    reason = f"rules measured on {', '.join(MEASURED)}; none recorded for {arch} yet"
    st = "assumed"
    if bool(unmeasured(t, ins, offs, act)[0]):
        st, reason = "unknown", UNMODELED_REASON
    return hardware.Wavefronts(w.count, w.ideal, w.phases, w.groups, st, reason)
