"""A Triton compile read once: its TTGIR by the one TTGIR reader (the ops the scan and the MMA
descriptor check need, in one pass), its sites (ops with their loop nests and locations, read when
the ledger first asks), and its PTX parsed once. Every consumer (the scan, the ledger, the
descriptor check) takes its view from here, and gets a fresh copy of the parsed PTX (the evaluator
keeps per-consumer caches on it).

>>> from pathlib import Path
>>> text = (Path(__file__).parent / "sample.ttgir").read_text()
>>> src = read_source(text, "sample.ttgir")
>>> src.module.num_warps, len(src.shared_module().ops) <= len(src.module.ops), src.kernel is None
(1, True, True)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from bankproof.models.gcpause import without_gc
from bankproof.verifier.ptx.module import KernelCode, PtxModule
from bankproof.verifier.ptx.parse import Kernel, parse_program
from bankproof.verifier.triton.sites import Site, read_sites
from bankproof.verifier.triton.ttgir import MMA_OPS, SCAN_OPS, Module, read_ttgir

READ_OPS = SCAN_OPS


BODY_MEMOS = frozenset({"dests", "writers", "classes", "base_slice", "computable"})  # of the body alone


class _SharedMemo(dict):
    """A consumer's caches: its own, but the body-only ones (:data:`BODY_MEMOS`) read from and
    written to the parsed kernel's, so the next consumer does not compute them again."""

    def __init__(self, shared: dict):
        super().__init__({k: v for k, v in shared.items() if k in BODY_MEMOS})
        self._shared = shared

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if key in BODY_MEMOS:
            self._shared[key] = value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]


@dataclass(frozen=True)
class TritonSource:
    """One compile: ``path`` (how reports name the TTGIR), the texts, and what was read from them."""

    path: str
    ttgir: str
    ptx: str | None
    module: Module
    kernel: Kernel | None
    ptx_error: str | None = None  # why the PTX could not be parsed
    program: tuple[PtxModule, KernelCode] | None = None  # the same reading, as the kernel machine runs it

    @functools.cached_property
    def sites(self) -> tuple[tuple[Site, ...], Mapping[str, int], tuple[str, ...]]:
        """The TTGIR's sites (every op with its loop nest and location chain), its integer constants
        and the kernel's argument names: read on first use (the ledger's), once."""
        sites, consts, arg_names = read_sites(self.ttgir)
        return tuple(sites), consts, tuple(arg_names)

    def shared_module(self) -> Module:
        """The TTGIR ops the scan reads (shared-memory ops, and the MMA ops that read buffers as
        dot operands), as a view of the one module."""
        return self._view(SCAN_OPS)

    def mma_module(self) -> Module:
        """The TTGIR's MMA ops (the descriptor check's operands), as a view of the one module."""
        return self._view(MMA_OPS)

    def _view(self, ops: tuple[str, ...]) -> Module:
        view = copy.copy(self.module)
        view.ops = [op for op in self.module.ops if op.name in ops]
        return view

    def fresh_kernel(self) -> Kernel:
        """The parsed PTX with empty evaluator caches (each consumer slices it for its registers),
        but for what depends on the instructions alone (:data:`BODY_MEMOS`), which the consumers
        share; a ``ValueError`` saying why when there is none."""
        if self.kernel is None:
            raise ValueError(self.ptx_error or "no PTX given")
        return dataclasses.replace(self.kernel, memo=_SharedMemo(self.kernel.memo))


@without_gc
def read_source(ttgir: str, path: str = "<ttgir>", ptx: str | None = None) -> TritonSource:
    """Read a compile once (see the module docstring)."""
    module = read_ttgir(ttgir, READ_OPS)
    kernel, error, program = None, None, None
    if ptx is not None:
        try:
            ptx_module, code, kernel = parse_program(ptx)
            program = (ptx_module, code)
        except (ValueError, KeyError, IndexError) as e:  # PTX the reader cannot read: said where it is used
            error = str(e)
    return TritonSource(path, ttgir, ptx, module, kernel, error, program)
