"""Nsight Compute's source page, read: ``ncu -i REP --page source --csv --print-source cuda,sass``
gives each source line of a kernel and the SASS instructions under it, with ``Instructions
Executed`` and the ``SourceCounters`` section's ``L1 Wavefronts Shared`` and ``... Ideal``. The
rows that touch shared memory (:func:`read_export`), the op class of a SASS instruction
(:func:`sass_class`), and the reduced form recorded exports are committed in
(:func:`reduce_export`). ``triton profile`` and ``bankproof kernel --ncu`` both read it.

>>> rows = read_export('"File Path","/x/k.py"\\n"Line No","Source","Address","Source",'
...     '"Instructions Executed","L1 Wavefronts Shared","L1 Wavefronts Shared Ideal"\\n'
...     '"7","x = 1","-","-","0","0","0"\\n"","","0x10","  STS [R1], R2","4","16","4"')
>>> rows[0].file, rows[0].line, rows[0].executed, rows[0].wavefronts
('k.py', 7, 4, 16)
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from bankproof.models.errors import InputError

WHERE = "triton profile"


@dataclass(frozen=True)
class SassRow:
    """One SASS instruction of the export with the source line it is attributed to."""

    file: str
    line: int
    sass: str
    executed: int
    wavefronts: int
    ideal: int
    address: str = ""  # the cuda view lists an inlined instruction under each line of its chain
    function: str = ""  # the export's "Function Name" for the block the row is in


MAX_COUNT = 1 << 53  # a counter beyond this is not one ncu wrote


def _count(v: str | None, column: str, row: int) -> int:
    """A counter cell: digits (with thousands commas), or ``-``/``n/a``/empty for none; anything else
    (text, a negative, ``nan``, ``inf``, a fraction, a huge value) names the row and column."""
    text = (v or "").replace(",", "").strip()
    if text in ("", "-", "n/a"):
        return 0
    if not text.isdigit() or len(text) > 16 or int(text) > MAX_COUNT:
        raise InputError(WHERE, "export", f"row {row}: {column} must be a count (digits)", text[:40])
    return int(text)


def read_export(text: str) -> list[SassRow]:
    """The export's SASS rows that touch shared memory (an LDS/STS/LDSM/STSM/LDGSTS/ATOMS opcode or
    any shared wavefront), each with its source line; refused, naming the ncu flag, when the
    export has no source lines or no shared-wavefront counters."""
    try:
        rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    except csv.Error as e:  # a field past csv's limit (128 KB), a malformed quote
        raise InputError(WHERE, "export", f"is not CSV as ncu writes it ({e})") from None
    if not any(r and r[0] == "Line No" for r in rows):
        raise InputError(
            WHERE, "export",
            "has no source lines: export the source page with --print-source cuda,sass (ncu -i REP "
            "--page source --csv --print-source cuda,sass) of a kernel compiled with line info",
        )  # fmt: skip
    counters = ("L1 Wavefronts Shared", "L1 Conflicts Shared N-Way", "L2 Theoretical Sectors Global")
    if not any(r and r[0] == "Line No" and any(c in r for c in counters) for r in rows):
        raise InputError(
            WHERE, "export", "has no source counters (L1 Wavefronts Shared): profile with --section "
            "SourceCounters",
        )  # fmt: skip
    out: list[SassRow] = []
    file, line, header, function = "", 0, None, ""
    for no, r in enumerate(rows, 1):
        if not r:
            continue
        if r[0] == "File Path":
            file = r[1].rsplit("/", 1)[-1] if len(r) > 1 else ""
            continue
        if r[0] in ("Function Name", "Kernel Name"):
            function = r[1].strip() if len(r) > 1 else ""
            continue
        if r[0] == "Line No":  # each file's block has its own columns
            header = r[2:]
            continue
        if header is None:
            continue
        if r[0]:
            line = _count(r[0], "Line No", no)
            continue
        d = dict(zip(header, r[2:], strict=False))
        sass = d.get("Source", "").strip()
        wf = (
            _count(d["L1 Wavefronts Shared"], "L1 Wavefronts Shared", no)
            if "L1 Wavefronts Shared" in d
            else -1
        )
        if sass_class(sass) != "other" or wf > 0:
            out.append(SassRow(file, line, sass, _count(d.get("Instructions Executed"), "Instructions Executed", no),
                               wf, _count(d.get("L1 Wavefronts Shared Ideal"), "L1 Wavefronts Shared Ideal", no),
                               d.get("Address", ""), function))  # fmt: skip
    return out


# the ledger's class of a SASS opcode; warpgroup MMAs by operand type: HGMMA f16/bf16/tf32, QGMMA fp8,
# IGMMA int8, BGMMA b1
CLASS = {"LDS": "ld", "STS": "st", "LDSM": "ldsm", "STSM": "stsm", "LDGSTS": "ldgsts", "ATOMS": "atom",
         "HGMMA": "gmma", "QGMMA": "gmma", "IGMMA": "gmma", "BGMMA": "gmma"}  # fmt: skip


def sass_class(sass: str) -> str:
    """The ledger's op class of a SASS instruction (``LDS.128`` -> ``ld``, ``LDSM.16.M88`` -> ``ldsm``)."""
    words = sass.split()
    op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
    return CLASS.get(op.split(".")[0], "other")


# the counter columns read from a SASS row (beside Source and Address)
COUNTERS = (
    "Instructions Executed",
    "L1 Wavefronts Shared",
    "L1 Wavefronts Shared Ideal",
    "L1 Conflicts Shared N-Way",
)


def reduce_export(text: str) -> str:
    """An export cut to what :func:`read_export` reads (the file blocks, source lines and shared
    SASS rows; the columns Line No, Source, Address, Source, Instructions Executed and the shared
    wavefronts): the form recorded exports are committed in."""
    out, cols = [], None
    for r in csv.reader(line for line in text.splitlines() if line.startswith('"')):
        if not r:
            continue
        if r[0] in ("File Path", "Function Name", "Kernel Name"):
            out.append(r[:2])
        elif r[0] == "Line No":
            cols = [i for i, h in enumerate(r) if i < 4 or h in COUNTERS]
            out.append([r[i] for i in cols])
        elif cols is not None and (r[0] or sass_class(r[3].strip() if len(r) > 3 else "") != "other"):
            out.append([r[i] if i < len(r) else "" for i in cols])
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(out)
    return buf.getvalue()
