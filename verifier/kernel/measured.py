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
    for i in result.instructions:
        loc = i.inlined_from or i.location
        if loc is None:
            continue
        p = pred[
            (loc.file.rsplit("/", 1)[-1], loc.line, kind_of(i.family, i.instr).replace("atomic", "atom"))
        ]
        p[0] += i.instructions or 0
        p[1] = None if p[1] is None or i.wavefronts is None else p[1] + i.wavefronts
        p[2] += i.instructions_predicated or i.instructions_reached or i.instructions or 0
        p[3] = p[3] and i.status != "not modelled"
    by_address: dict = defaultdict(list)
    for row in rows:
        if not row.sass.startswith("@!PT"):  # padding ptxas never issues
            by_address[row.address or id(row)].append(row)
    meas: dict = defaultdict(lambda: [0, 0])
    for group in by_address.values():
        kind = sass_kind(group[0].sass)
        if kind in ("gmma", "other"):
            continue
        pick = next((x for x in group if (x.file, x.line, kind) in pred), group[0])
        meas[(pick.file, pick.line, kind)][0] += pick.executed
        meas[(pick.file, pick.line, kind)][1] += pick.wavefronts
    loose = {k: v for k, v in pred.items() if k[1] == 0}  # no source line in the PTX (`.loc 1 0 0`)
    out = []
    for key, (ex, wf) in sorted(meas.items()):
        m = measure(key, ex, wf, pred.get(key))
        for lk in [k for k in loose if (k[0], k[2]) == (key[0], key[2])] if not m.agrees else ():
            placed = measure(key, ex, wf, _with(pred.get(key), loose[lk]))
            if placed.agrees:  # ptxas gave them this line: the view counts them here
                n = loose.pop(lk)[0]
                m = replace(placed, note=f"with {n} instructions the PTX gives no source line, which ptxas "
                                         "placed on this line")  # fmt: skip
                break
        out.append(m)
    return out


def _with(p: list | None, q: list) -> list:
    """Two predictions ``[low, wavefronts, high, modelled]`` together."""
    p = p or [0, 0, 0, True]
    wf = None if p[1] is None or q[1] is None else p[1] + q[1]
    return [p[0] + q[0], wf, p[2] + q[2], p[3] and q[3]]


def measure(key: tuple, executed: int, wavefronts: int, predicted: list | None) -> LineMeasure:
    """One line: ``predicted`` is ``[low, wavefronts, high, modelled]`` (``None``: no instruction)."""
    lo, wf, hi, modelled = predicted if predicted is not None else [0, None, 0, False]
    wf = wf if modelled else None
    agrees = predicted is not None and lo <= executed <= hi and (wf is None or wf == wavefronts)
    return LineMeasure(key[0], key[1], key[2], executed, wavefronts, lo, hi, wf, bool(modelled), agrees)
