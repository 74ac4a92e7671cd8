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

Every result is a frozen dataclass; ``to_json()`` is what ``bankproof ... --json`` prints,
``to_text()`` what the command prints, and notebooks show it as HTML (bank maps as SVG).
Errors in the input raise :class:`InputError` (a ``ValueError``) naming the argument.

This module is a thin face over where things live (as ``jax.numpy`` is): each public name is
imported on first use, so ``import bankproof`` and ``bankproof --help`` stay fast.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from bankproof.models.version import VERSION as __version__  # noqa: F401 - the package version

# public name -> the module that defines it
_WHERE = {
    "Access": "bankproof.verifier.api.problem",
    "problem": "bankproof.verifier.api.problem",
    "verify": "bankproof.verifier.api.verify",
    "verify_many": "bankproof.verifier.api.many",
    "ManyResult": "bankproof.verifier.api.many",
    "agree": "bankproof.verifier.api.agree",
    "synth": "bankproof.verifier.api.synth",
    "explain": "bankproof.verifier.api.explain",
    "convert": "bankproof.verifier.api.convert",
    "show": "bankproof.verifier.api.show",
    "layout": "bankproof.verifier.api.layout",
    "wavefronts": "bankproof.verifier.api.wavefronts",
    "scan_ttgir": "bankproof.verifier.api.scan",
    "kernel": "bankproof.verifier.api.kernel",
    "kernel_open": "bankproof.verifier.api.kernel_open",
    "kernel_numba": "bankproof.verifier.api.kernel_numba",
    "kernel_cute": "bankproof.verifier.api.kernel_cute",
    "capture": "bankproof.verifier.api.replay",
    "replay": "bankproof.verifier.api.replay",
    "OpenResult": "bankproof.verifier.api.kernel_open",
    "KernelResult": "bankproof.verifier.kernel.records",
    "InputError": "bankproof.models.errors",
    "LinearLayout": "bankproof.models.layout",
    "AgreeResult": "bankproof.verifier.results",
    "ConvertResult": "bankproof.verifier.results",
    "ExplainResult": "bankproof.verifier.results",
    "LayoutResult": "bankproof.verifier.results",
    "ShowResult": "bankproof.verifier.results",
    "SynthResult": "bankproof.verifier.results",
    "VerifyResult": "bankproof.verifier.results",
    "WavefrontsResult": "bankproof.verifier.results",
    "ScanResult": "bankproof.verifier.triton.results",
}

__all__ = [
    "Access",
    "AgreeResult",
    "ConvertResult",
    "ExplainResult",
    "InputError",
    "KernelResult",
    "LayoutResult",
    "LinearLayout",
    "ManyResult",
    "OpenResult",
    "ScanResult",
    "ShowResult",
    "SynthResult",
    "VerifyResult",
    "WavefrontsResult",
    "agree",
    "capture",
    "convert",
    "explain",
    "kernel",
    "kernel_cute",
    "kernel_numba",
    "kernel_open",
    "layout",
    "problem",
    "replay",
    "scan_ttgir",
    "show",
    "synth",
    "verify",
    "verify_many",
    "wavefronts",
]
assert sorted(__all__) == sorted(_WHERE), "every public name has a home, and only those"


def __getattr__(name: str) -> _Any:
    """Import a public name where it lives, on first use (PEP 562); the renderers are wired to the
    results then too, so a result shows itself as text, HTML and SVG."""
    if name not in _WHERE:
        raise AttributeError(f"module 'bankproof' has no attribute {name!r}")
    _importlib.import_module("bankproof.verifier.render.display")
    value = getattr(_importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if _TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from bankproof.models.errors import InputError
    from bankproof.models.layout import LinearLayout
    from bankproof.verifier.api.convert import convert
    from bankproof.verifier.api.explain import explain
    from bankproof.verifier.api.kernel import kernel
    from bankproof.verifier.api.layout import layout
    from bankproof.verifier.api.many import ManyResult, verify_many
    from bankproof.verifier.api.problem import Access, problem
    from bankproof.verifier.api.replay import capture, replay
    from bankproof.verifier.api.scan import scan_ttgir
    from bankproof.verifier.api.show import show
    from bankproof.verifier.api.synth import synth
    from bankproof.verifier.api.verify import verify
    from bankproof.verifier.api.wavefronts import wavefronts
    from bankproof.verifier.kernel.records import KernelResult
    from bankproof.verifier.results import (
        ConvertResult,
        ExplainResult,
        LayoutResult,
        ShowResult,
        SynthResult,
        VerifyResult,
        WavefrontsResult,
    )
    from bankproof.verifier.triton.results import ScanResult
