"""The question every reader ends in: one warp-level shared-memory access through a memory layout
(:class:`AccessProblem`), answered by :func:`bankproof.verifier.engine.answer.answer`.

>>> from bankproof.models.layout import LinearLayout
>>> lay = LinearLayout.identity1d(32, "lane", "dim0")
>>> AccessProblem(LinearLayout.identity1d(32, "offset", "dim0"), lay, 32, "load").dims
('dim0',)
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout


@dataclass(frozen=True)
class AccessProblem:
    """One warp-level shared-memory access: ``layout`` (register, lane, warp, block bits onto the
    tensor's ``dims``) writing (``kind`` ``store``) or reading (``load``) elements of ``elem_bits``
    through ``memory`` on ``arch``. ``instr``: ``auto`` (the widest legal vector), one instruction,
    or several separated by commas in order of preference (the first the pair delivers).
    ``free_lanes_off``: the lanes, warps and registers that hold copies of others' elements (the
    layout's free bits) issue nothing, as Triton predicates a ``cp.async``. ``where`` names the
    access in an error message."""

    memory: LinearLayout | PaddedLayout
    layout: LinearLayout
    elem_bits: int
    kind: str
    arch: str = DEFAULT_ARCH
    instr: str = "auto"
    dims: tuple[str, ...] = ()
    free_lanes_off: bool = False
    where: str | None = None

    def __post_init__(self) -> None:
        if not self.dims:
            linear = self.memory.linear if isinstance(self.memory, PaddedLayout) else self.memory
            object.__setattr__(self, "dims", tuple(linear.out_dim_names))


__all__ = ["AccessProblem"]
