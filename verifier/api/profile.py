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
    return got.ledger.kernel or "", prof.explain(got.ledger, rows, ctas)
