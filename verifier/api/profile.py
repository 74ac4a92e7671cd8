"""``bankproof triton profile``: a measured Nsight Compute profile explained line by line by the
ledger of the same compile (read once and analysed once by the Triton wing's pipeline).

>>> from pathlib import Path
>>> rows = profile_rows('"File Path","/x/k.py"\\n"Line No","Source","Address","Source",'
...     '"Instructions Executed","L1 Wavefronts Shared","L1 Wavefronts Shared Ideal"\\n'
...     '"7","x = 1","-","-","0","0","0"\\n"","","0x10","  STS [R1], R2","4","16","4"')
>>> rows[0].line
7
"""

from __future__ import annotations

import re

from bankproof.gpu_checks.source_page import read_export
from bankproof.models.errors import InputError
from bankproof.verifier.triton import pipeline
from bankproof.verifier.triton import profile as prof
from bankproof.verifier.triton.source import read_source


def profile_rows(export: str) -> list:
    """The export's SASS rows that touch shared memory (refused, naming the ncu flag, when the
    export has no source lines or counters)."""
    return read_export(export)


def profile(ttgir: str, ptx: str, export: str, args: dict[str, int] | None = None, ctas: int = 1,
            path: str = "<ttgir>") -> tuple[str, list[prof.ProfileLine]]:  # fmt: skip
    """``(kernel, lines)``: per measured source line, the ledger's prediction beside the
    measurement (``bankproof triton profile``)."""
    if isinstance(ctas, bool) or not isinstance(ctas, int) or not 1 <= ctas <= 1 << 31:
        raise InputError("triton profile", "ctas", "must be a positive number of CTAs", ctas)
    rows = profile_rows(export)
    got = pipeline.analyse(read_source(ttgir, path, ptx), args)
    if got.ledger is None:
        raise InputError("triton profile", "ptx", got.ledger_error or "cannot be read as a kernel")
    same_kernel(ttgir, got.ledger, rows)
    return got.ledger.kernel or "", prof.explain(got.ledger, rows, ctas)


def same_kernel(ttgir: str, ledger, rows: list) -> None:
    """Refuse an export or a PTX of another kernel (they would read as agreeing or as unowned):
    the PTX's kernel must be the TTGIR's function, the export's function names (where it has
    them) must include it, and the export's source files must include the kernel's own."""
    m = re.search(r"tt\.func\s+(?:public\s+)?@([\w$.]+)", ttgir)
    kernel = ledger.kernel or ""
    if m and kernel and m.group(1) != kernel:
        raise InputError("triton profile", "ptx", f"is kernel {kernel}, the TTGIR's is {m.group(1)}")
    names = sorted({r.function for r in rows if r.function})
    if names and kernel and kernel not in names:
        raise InputError(
            "triton profile", "export", f"is a profile of {', '.join(names)[:200]}, not of {kernel}"
        )
    ours = {e.location.split(":", 1)[0] for e in ledger.entries}  # the kernel's own file (outermost lines)
    theirs = {r.file for r in rows if r.file}
    if ours and theirs and not ours & theirs:
        files = ", ".join(sorted(theirs))[:200]
        why = f"names source files {files}, none of the kernel's ({', '.join(sorted(ours))[:200]})"
        raise InputError("triton profile", "export", why)


__all__ = ["profile"]
