"""A measured Nsight Compute source view joined with the analysis, line by line: which of the
kernel's shared-memory lines the hardware executed as predicted, and where not. The export is
ncu's source page (``ncu -i REP --page source --csv --print-source cuda,sass`` of a launch profiled
with ``--section SourceCounters``; the Triton profile's reader reads it). The view lists an inlined
instruction under several lines of its chain: each SASS address is taken once, at the line the
analysis names (the innermost, a header's for CuTe or CUB code). Executed counts compare as a
range: ptxas may turn a branch into predication, and the view then counts warps that run the line
predicated off (``instructions_predicated``).

>>> measure(("k.cu", 9, "ld"), 4, 16, [4, 16, 8, True]).agrees
True
>>> sass_kind("@!P0 LD.E R9, desc[UR4][R2.64]"), sass_kind("LDS.128 R4, [R1]")
('ld', 'ld')
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from bankproof.gpu_checks.source_page import SassRow, sass_class
from bankproof.verifier.kernel.records import KernelResult, LineMeasure
from bankproof.verifier.kernel.totals import kind_of


def sass_kind(sass: str) -> str:
    """The op class of a SASS instruction; generic LD/ST (global accesses are LDG/STG) are taken as
    shared-memory ones where the analysis has a shared access on that line."""
    words = sass.split()
    op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
    return {"LD": "ld", "ST": "st"}.get(op.split(".")[0], sass_class(sass))


def join(result: KernelResult, rows: list[SassRow]) -> list[LineMeasure]:
    """Per measured (file, line, class): the measurement beside the analysis."""
    pred: dict = defaultdict(lambda: [0, 0, 0, True])
    items: dict = defaultdict(list)  # line-0 instructions one by one: ptxas may spread them over lines
    for i in result.instructions:
        loc = i.inlined_from or i.location
        if loc is None:
            continue
        key = (loc.file.rsplit("/", 1)[-1], loc.line, kind_of(i.family, i.instr).replace("atomic", "atom"))
        if loc.line == 0:
            items[(key[0], key[2])].append(_one(i))
        p = pred[key]
        p[0] += i.instructions or 0
        p[1] = None if p[1] is None or i.wavefronts is None else p[1] + i.wavefronts
        p[2] += i.instructions_predicated or i.instructions_reached or i.instructions or 0
        p[3] = p[3] and i.rests_on != "not modelled"
    by_address: dict = defaultdict(list)
    for row in rows:
        if not row.sass.startswith("@!PT"):  # padding ptxas never issues
            by_address[row.address or id(row)].append(row)
    meas: dict = defaultdict(lambda: [0, 0, True])
    for group in by_address.values():
        kind = sass_kind(group[0].sass)
        if kind in ("gmma", "other"):
            continue
        pick = next((x for x in group if (x.file, x.line, kind) in pred), group[0])
        meas[(pick.file, pick.line, kind)][0] += pick.executed
        meas[(pick.file, pick.line, kind)][1] += pick.wavefronts
        meas[(pick.file, pick.line, kind)][2] &= pick.sass.lstrip().startswith("@")  # guarded in the SASS
    out = []
    for key, (ex, wf, guarded) in sorted(meas.items()):
        m = measure(key, ex, wf, pred.get(key), guarded)
        pool = items.get((key[0], key[2]), [])
        take = _placed(pred.get(key), pool, ex, wf) if not m.agrees and key[1] != 0 and pool else None
        if take:  # ptxas gave these line-0 instructions this line: the view counts them here
            both = pred.get(key)
            for t in take:
                both = _with(both, t)
                pool.remove(t)
            n = sum(t[0] for t in take)
            why = f"with {n} instructions the PTX gives no source line, which ptxas placed on this line"
            m = replace(measure(key, ex, wf, both, guarded), note=why)
        out.append(m)
    return out


def _one(i) -> list:
    """One instruction's prediction ``[low, wavefronts, high, modelled]``."""
    return [i.instructions or 0, i.wavefronts, i.instructions_predicated or i.instructions_reached
            or i.instructions or 0, i.rests_on != "not modelled"]  # fmt: skip


def _placed(p: list | None, pool: list, executed: int, wavefronts: int) -> list | None:
    """The fewest line-0 instructions of ``pool`` that, added to ``p``, make the line agree (a
    search over at most 2^16 subsets), or ``None``."""
    from itertools import combinations
    from math import comb

    for k in range(1, min(len(pool), 16) + 1):
        if comb(len(pool), k) > 1 << 16:
            break
        for pick in combinations(pool, k):
            both = p
            for t in pick:
                both = _with(both, t)
            if measure(("", 0, ""), executed, wavefronts, both).agrees:
                return list(pick)
    return None


def _with(p: list | None, q: list) -> list:
    """Two predictions ``[low, wavefronts, high, modelled]`` together."""
    p = p or [0, 0, 0, True]
    wf = None if p[1] is None or q[1] is None else p[1] + q[1]
    return [p[0] + q[0], wf, p[2] + q[2], p[3] and q[3]]


def measure(
    key: tuple, executed: int, wavefronts: int, predicted: list | None, guarded: bool = False
) -> LineMeasure:
    """One line: ``predicted`` is ``[low, wavefronts, high, modelled]`` (``None``: no instruction).
    Where every SASS instruction of the line carries a guard (``@P0 STS``: ptxas turned a branch
    into predication), warps with every lane off issue it too: the view's count may pass ``high``."""
    lo, wf, hi, modelled = predicted if predicted is not None else [0, None, 0, False]
    wf = wf if modelled else None
    issued = lo <= executed <= hi or (guarded and lo <= executed)
    agrees = predicted is not None and issued and (wf is None or wf == wavefronts)
    return LineMeasure(key[0], key[1], key[2], executed, wavefronts, lo, hi, wf, bool(modelled), agrees)
