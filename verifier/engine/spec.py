"""A spec as the engines take it: the tensor (shape, element type, arch, dim names), the memory
layout, the accesses that write and read it, and the other engines that touch the buffer. The files
and Python values users give are read into these records on the API's input side
(:mod:`bankproof.verifier.api.spec_file`, :mod:`bankproof.verifier.api.problem`).

>>> from bankproof.models.layout import LinearLayout
>>> lay = LinearLayout.identity1d(32, "lane", "i")
>>> AccessSpec("st", "store", "auto", lay, "").kind
'store'
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.verifier.engine.buffer_engines import EngineSpec


@dataclass(frozen=True)
class AccessSpec:
    name: str
    kind: str
    instr: str
    layout: LinearLayout
    layout_text: str
    note: str = ""  # which CUTLASS release's definition an auto-vectorizing copy atom was read with


@dataclass(frozen=True)
class UnreadAccess:
    """An access ``verify`` could not read (a CuTe atom outside bankproof's tables): its name,
    kind and why, reported beside the answers for the others."""

    name: str
    kind: str
    reason: str


@dataclass(frozen=True)
class Spec:
    path: str
    shape: list[int]
    dtype: str
    elem_bits: int
    arch: str
    dims: list[str]
    memory: LinearLayout | PaddedLayout | None
    memory_notation: str
    memory_text: str
    accesses: list[AccessSpec]
    warnings: tuple[str, ...] = ()
    unread: tuple[UnreadAccess, ...] = ()
    engines: tuple[EngineSpec, ...] = ()  # engines besides the accesses that touch the buffer (synth)
