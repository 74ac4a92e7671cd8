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

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from bankproof.models import target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.files import json_value
from bankproof.models.hardware import LANES
from bankproof.verifier.engine import tables
from bankproof.verifier.results import WavefrontsResult

MAX_LINE = 100_000


def _load(line: str, n: int) -> object:
    if len(line) > MAX_LINE:
        raise InputError(f"line {n}", "line", f"is longer than {MAX_LINE} characters", len(line))
    return json_value(line, f"line {n}", "json")


def load_all(numbered: list[tuple[int, str]]) -> list[object]:
    """Parse every line in one call (fast); on an error, find and name the bad line."""
    if any(len(line) > MAX_LINE for _, line in numbered):
        for n, line in numbered:
            _load(line, n)
    try:
        data = json_value("[" + ",".join(line for _, line in numbered) + "]", "wavefronts", "lines")
        if isinstance(data, list) and len(data) == len(numbered):
            return data
    except InputError:
        pass
    return [_load(line, n) for n, line in numbered]


CASE_FIELDS = ("instr", "byte_offsets", "active", "arch")  # a line's fields (docs/reference/formats)


def check_case(
    case: object, n: int, warp: int = LANES, active_field: bool = True
) -> tuple[str, list[int], list[bool]]:
    """One parsed case -> (instr, byte_offsets, active), with errors naming the line and field;
    ``warp`` lanes (the case's arch's), ``active`` a field when ``active_field``."""
    where = f"line {n}"
    if not isinstance(case, dict):
        raise InputError(where, "json", "must be an object", str(case)[:60])
    fields = [f for f in CASE_FIELDS if active_field or f != "active"]
    unknown = set(case) - set(fields)
    if unknown:
        raise InputError(where, ", ".join(sorted(unknown)), f"is not a field ({', '.join(fields)})")
    instr = case.get("instr")
    if not isinstance(instr, str):
        raise InputError(where, "instr", "must be an instruction name", instr)
    offs = case.get("byte_offsets")
    if type(offs) is not list or len(offs) != warp or set(map(type, offs)) != {int}:
        got = len(offs) if isinstance(offs, list) else offs
        raise InputError(where, "byte_offsets", f"must be a list of {warp} integers", got)
    if min(offs) < 0 or max(offs) >= 1 << 31:
        raise InputError(
            where, "byte_offsets", "must be in [0, 2^31)", min(offs) if min(offs) < 0 else max(offs)
        )
    active = case.get("active")
    if active is None:
        active = [True] * warp
    elif type(active) is not list or len(active) != warp or set(map(type, active)) != {bool}:
        got = len(active) if isinstance(active, list) else active
        raise InputError(where, "active", f"must be a list of {warp} booleans", got)
    return instr, offs, active


def run_lines(lines: Iterable[str], arch: str = DEFAULT_ARCH) -> list[WavefrontsResult]:
    """Model every case; results in input order."""
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    return run_cases(zip((n for n, _ in numbered), load_all(numbered)), arch)


Answer = tuple[int, "WavefrontsResult | InputError"]  # (line number, its result or what is wrong)


def run_lines_each(lines: Iterable[str], arch: str = DEFAULT_ARCH) -> list[Answer]:
    """Every non-blank line answered on its own: ``(line number, its result or the InputError
    naming what is wrong with it)``, in input order; a batch with bad lines still answers the good
    ones (all at once when none is bad, else line by line). An unknown ``arch`` is refused whole.

    >>> [(n, type(r).__name__) for n, r in run_lines_each(['{"instr": "ld32", "byte_offsets": [0]}'])]
    [(1, 'InputError')]
    """
    target.check_arch(arch, "wavefronts", "arch")
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    try:
        results = run_cases(zip((n for n, _ in numbered), load_all(numbered)), arch)
        return [(n, r) for (n, _), r in zip(numbered, results, strict=True)]
    except InputError:
        pass
    out: list[Answer] = []
    for n, line in numbered:
        try:
            out.append((n, run_cases([(n, _load(line, n))], arch)[0]))
        except InputError as e:
            out.append((n, e))
    return out


def run_cases(numbered: Iterable[tuple[int, object]], arch: str = DEFAULT_ARCH) -> list[WavefrontsResult]:
    """Model parsed cases ``(line number, case object)``; results in input order. A case may name
    its own ``arch`` (its target says its warp size and rules)."""
    target.check_arch(arch, "wavefronts", "arch")
    cases = []
    for n, case in numbered:
        own = arch
        if isinstance(case, dict) and "arch" in case:
            own = target.check_arch(case["arch"], f"line {n}", "arch")
        t = target.get(own)
        cases.append((n, own, *check_case(case, n, t.warp, t.partial_warps)))
    by_kind: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (_, own, name, _, _) in enumerate(cases):
        by_kind[(own, name)].append(i)
    out: list[WavefrontsResult | None] = [None] * len(cases)
    for (own, name), idx in by_kind.items():
        offs = np.array([cases[i][3] for i in idx], dtype=np.int64)
        act = np.array([cases[i][4] for i in idx], dtype=bool)
        try:
            rows = tables.cases(own, name, offs, act)
        except InputError as e:
            for j, i in enumerate(idx):  # find the first offending line
                try:
                    tables.cases(own, name, offs[j : j + 1], act[j : j + 1])
                except InputError as e1:
                    raise InputError(f"line {cases[i][0]}", e1.field, e1.problem, e1.value) from None
            raise InputError(f"line {cases[idx[0]][0]}", e.field, e.problem, e.value) from None
        for j, i in enumerate(idx):
            out[i] = WavefrontsResult(*rows[j])
    return out  # type: ignore[return-value]


def wavefronts(
    instr: str, byte_offsets: Sequence[int], *, active: Sequence[bool] | None = None, arch: str = DEFAULT_ARCH
) -> WavefrontsResult:
    """The hardware model's wavefronts for one warp instruction (``bankproof wavefronts``).

    >>> wavefronts("ld.shared.v4.b32", [0] * 32)
    WavefrontsResult(wavefronts=2, ideal=2, groups=[[0, 1, ..., 15], [16, 17, ..., 31]], rests_on='measured')
    """
    import numbers

    def plain(x: Any) -> Any:
        return int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x

    def listed(value: Any, field: str) -> list:
        sized = hasattr(value, "__iter__") and hasattr(value, "__len__")
        if isinstance(value, (str, bytes, dict)) or not sized:
            raise InputError("wavefronts", field, "must be a list, one entry per lane", value)
        if len(value) > 1024:
            raise InputError("wavefronts", field, "must have one entry per lane (32 or 64)", len(value))
        return list(value)

    case: dict = {"instr": instr, "byte_offsets": [plain(x) for x in listed(byte_offsets, "byte_offsets")]}
    if active is not None:
        case["active"] = [bool(x) if type(x).__name__ == "bool_" else x for x in listed(active, "active")]
    try:
        return run_cases([(1, case)], arch)[0]
    except InputError as e:  # name the argument, not a JSONL line
        raise InputError("wavefronts", e.field, e.problem, e.value) from None


__all__ = ["wavefronts", "run_lines", "run_lines_each"]
