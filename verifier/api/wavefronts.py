"""The hardware model over a batch of warp instructions (``bankproof wavefronts``, JSONL).

Each input line: ``{"instr": "ld128", "byte_offsets": [32 ints], "active": [32 bools]}``
(``active`` optional). Each output line: ``{"wavefronts": N, "ideal": I, "groups": [[lanes]...],
"status": "measured"|"assumed"|"unknown"}``; ``wavefronts`` is null when the status is unknown.

>>> import json
>>> line = json.dumps({"instr": "ld32", "byte_offsets": [0, 128] + [4] * 30})
>>> [(r.wavefronts, r.ideal) for r in run_lines([line])]
[(2, 1)]
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from bankproof.models import amd
from bankproof.models.errors import InputError
from bankproof.models.hardware import (
    ARCHS,
    LANES,
    Instr,
    check_arch,
    evaluate,
    instruction,
    model_status,
    unmodeled,
)
from bankproof.verifier.results import WavefrontsResult

MAX_LINE = 100_000
_ALL = [True] * LANES


def _load(line: str, n: int) -> object:
    if len(line) > MAX_LINE:
        raise InputError(f"line {n}", "line", f"is longer than {MAX_LINE} characters", len(line))
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"line {n}", "json", f"is not valid JSON ({e.msg})", line.strip()[:60]) from None


def load_all(numbered: list[tuple[int, str]]) -> list[object]:
    """Parse every line in one call (fast); on an error, find and name the bad line."""
    if any(len(line) > MAX_LINE for _, line in numbered):
        for n, line in numbered:
            _load(line, n)
    try:
        data = json.loads("[" + ",".join(line for _, line in numbered) + "]")
        if len(data) == len(numbered):
            return data
    except json.JSONDecodeError:
        pass
    return [_load(line, n) for n, line in numbered]


def check_case(case: object, n: int) -> tuple[str, list[int], list[bool]]:
    """One parsed case -> (instr, byte_offsets, active), with errors naming the line and field."""
    where = f"line {n}"
    if not isinstance(case, dict):
        raise InputError(where, "json", "must be an object", str(case)[:60])
    unknown = set(case) - {"instr", "byte_offsets", "active", "arch"}
    if unknown:
        fields = "instr, byte_offsets, active, arch"
        raise InputError(where, ", ".join(sorted(unknown)), f"is not a field ({fields})")
    instr = case.get("instr")
    if not isinstance(instr, str):
        raise InputError(where, "instr", "must be an instruction name", instr)
    offs = case.get("byte_offsets")
    if type(offs) is not list or len(offs) != LANES or set(map(type, offs)) != {int}:
        got = len(offs) if isinstance(offs, list) else offs
        raise InputError(where, "byte_offsets", f"must be a list of {LANES} integers", got)
    if min(offs) < 0 or max(offs) >= 1 << 31:
        raise InputError(
            where, "byte_offsets", "must be in [0, 2^31)", min(offs) if min(offs) < 0 else max(offs)
        )
    active = case.get("active")
    if active is None:
        active = _ALL
    elif type(active) is not list or len(active) != LANES or set(map(type, active)) != {bool}:
        got = len(active) if isinstance(active, list) else active
        raise InputError(where, "active", f"must be a list of {LANES} booleans", got)
    return instr, offs, active


def run_lines(lines: Iterable[str], arch: str = "sm90") -> list[WavefrontsResult]:
    """Model every case; results in input order."""
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    return run_cases(zip((n for n, _ in numbered), load_all(numbered)), arch)


def _amd_case(case: dict, n: int, arch: str) -> WavefrontsResult:
    """One AMD (wave64) case: ``{"arch": "gfx942", "instr": "ds_read_b128", "byte_offsets": [64
    ints]}``, modeled from the published lane groups (``models/amd.py``)."""
    where = f"line {n}"
    unknown = set(case) - {"arch", "instr", "byte_offsets"}
    if unknown:
        fields = "arch, instr, byte_offsets"
        raise InputError(where, ", ".join(sorted(unknown)), f"is not a field of an AMD case ({fields})")
    offs = case.get("byte_offsets")
    if type(offs) is not list or len(offs) != amd.WAVE or set(map(type, offs)) != {int} or min(offs) < 0:
        raise InputError(where, "byte_offsets", f"must be a list of {amd.WAVE} non-negative integers")
    try:
        r = amd.rule(arch, case.get("instr"))
    except InputError as e:
        raise InputError(where, e.field, e.problem, e.value) from None
    if r.groups is None:
        return WavefrontsResult(None, 0, None, "unknown")
    counts, ideals = amd.evaluate(r, np.array([offs], dtype=np.int64))
    groups = tuple(np.flatnonzero(r.groups == g).tolist() for g in range(r.ngroups))
    return WavefrontsResult(int(counts[0]), int(ideals[0]), groups, amd.STATUS)


def run_cases(numbered: Iterable[tuple[int, object]], arch: str = "sm90") -> list[WavefrontsResult]:
    """Model parsed cases ``(line number, case object)``; results in input order. A case may name
    its own ``arch`` (an AMD one: 64 lanes, the published LDS rules)."""
    check_arch(arch, "wavefronts", "arch")
    numbered = list(numbered)
    amd_cases = {}
    for n, case in numbered:
        own = case.get("arch", arch) if isinstance(case, dict) else arch
        if isinstance(case, dict) and "arch" in case:
            check_arch(own, f"line {n}", "arch")
        if amd.check_arch(own):
            amd_cases[n] = _amd_case(case, n, own)
        elif own != arch:
            raise InputError(f"line {n}", "arch", f"must be an AMD arch or the run's --arch ({arch})", own)
    if amd_cases:
        rest = run_cases([(n, c) for n, c in numbered if n not in amd_cases], arch) if len(amd_cases) < len(
            numbered) else []  # fmt: skip
        it = iter(rest)
        return [amd_cases[n] if n in amd_cases else next(it) for n, _ in numbered]
    cases = [(n, *check_case(case, n)) for n, case in numbered]
    known: dict[str, Instr] = {}
    by_instr: dict[str, list[int]] = defaultdict(list)
    for i, (n, name, _, _) in enumerate(cases):
        ins = known.get(name)
        if ins is None:
            try:
                ins = known[name] = instruction(name)
            except InputError as e:
                raise InputError(f"line {n}", "instr", e.problem, name) from None
        if ins.min_arch > ARCHS[arch]:
            raise InputError(f"line {n}", "instr", f"needs sm{ins.min_arch} or newer", f"{name} on {arch}")
        by_instr[ins.short].append(i)
    out: list[WavefrontsResult | None] = [None] * len(cases)
    for short, idx in by_instr.items():
        ins = instruction(short)
        offs = np.array([cases[i][2] for i in idx], dtype=np.int64)
        act = np.array([cases[i][3] for i in idx], dtype=bool)
        try:
            counts, ideals, groups = evaluate(ins, offs, act, groups=True)
        except InputError:
            for i in idx:  # find the first offending line
                try:
                    evaluate(ins, offs[[idx.index(i)]], act[[idx.index(i)]])
                except InputError as e:
                    raise InputError(f"line {cases[i][0]}", e.field, e.problem, e.value) from None
            raise
        unknown = unmodeled(ins, offs, act, arch)
        status = model_status(arch)
        for j, i in enumerate(idx):
            if unknown[j]:
                out[i] = WavefrontsResult(None, int(ideals[j]), None, "unknown")
            else:
                out[i] = WavefrontsResult(int(counts[j]), int(ideals[j]), groups[j], status)
    return out  # type: ignore[return-value]


def wavefronts(
    instr: str, byte_offsets: Sequence[int], active: Sequence[bool] | None = None, *, arch: str = "sm90"
) -> WavefrontsResult:
    """The hardware model's wavefronts for one warp instruction (``bankproof wavefronts``).

    >>> wavefronts("ld.shared.v4.b32", [0] * 32)
    WavefrontsResult(wavefronts=2, ideal=2, groups=[[0, 1, ..., 15], [16, 17, ..., 31]], status='measured')
    """
    import numbers

    def plain(x: Any) -> Any:
        return int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x

    case: dict = {"instr": instr, "byte_offsets": [plain(x) for x in byte_offsets]}
    if active is not None:
        case["active"] = [bool(x) if type(x).__name__ == "bool_" else x for x in active]
    try:
        return run_cases([(1, case)], arch)[0]
    except InputError as e:  # name the argument, not a JSONL line
        raise InputError("wavefronts", e.field, e.problem, e.value) from None
