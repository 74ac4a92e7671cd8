"""bankproof: proofs about GPU shared-memory layouts.

Give it a memory layout (a swizzle) and the layouts that write and read it, in the notation you
already use (Triton attributes, CuTe ``Sw<B,M,S> o (shape):(stride)``, explicit bases, formulas,
or ``LinearLayout`` objects); get back, with proofs, how many wavefronts every access costs, a
pair of conflicting lanes when there are conflicts, and the optimal layout.

>>> import bankproof
>>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
>>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
>>> r = bankproof.verify("32*m + (n ^ (2*m))", store=rows, load=cols, shape=(16, 32), dtype="f32")
>>> r.verdict, [a.state for a in r.accesses]
('proved', ['conflict-free', 'conflict-free'])

Every result is a frozen dataclass; ``to_json()`` is what ``bankproof ... --json`` prints.
Errors in the input raise :class:`InputError` (a ``ValueError``) naming the field.
"""

from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.verifier.api import (
    Access,
    convert,
    explain,
    layout,
    problem,
    scan_ttgir,
    show,
    synth,
    verify,
    wavefronts,
)
from bankproof.verifier.results import (
    ConvertResult,
    ExplainResult,
    LayoutResult,
    ScanResult,
    ShowResult,
    SynthResult,
    VerifyResult,
    WavefrontsResult,
)

__version__ = "0.1.0"

__all__ = [
    "Access",
    "ConvertResult",
    "ExplainResult",
    "InputError",
    "LayoutResult",
    "LinearLayout",
    "ScanResult",
    "ShowResult",
    "SynthResult",
    "VerifyResult",
    "WavefrontsResult",
    "convert",
    "explain",
    "layout",
    "problem",
    "scan_ttgir",
    "show",
    "synth",
    "verify",
    "wavefronts",
]
