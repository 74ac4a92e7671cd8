"""The instruction forms the GPU measured: the PTX semantics oracle (lab/gpu/ptx_semantics.py) ran
every integer, bit, conversion, predicate, shuffle and vote form the machines evaluate, at every
type and modifier they read, on edge and random operands on an H100, and replayed the results
through both machines (gpu_checks/results/h100-2026-12-07-ptx-semantics.json.gz, 20,544 cases).
The forms where every case was equal or left unknown are listed in ``measured_forms.json`` (made
by ``python -m lab.gpu.ptx_semantics forms RECORD``; a test makes it again from the record). The
machines evaluate those forms only: any other form's result is unknown, so a count never rests on
semantics nobody checked. ``cvta`` is the machines' address model (a shared window's offsets),
not arithmetic; the measured kernels judge it.

>>> measured("add.s32"), measured("bfe.s64"), measured("add.cc.u32"), measured("cvta.to.global.u64")
(True, True, False, True)
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

ADDRESS_MODEL = frozenset({"cvta"})  # bases the machines model as addresses, not as arithmetic


@cache
def forms() -> frozenset[str]:
    """Every measured form (``setp.lt.and.u64``, ``lop3.b32``, ``shfl.sync.bfly.b32``)."""
    data = json.loads(files("bankproof.verifier.ptx").joinpath("measured_forms.json").read_text())
    return frozenset(data["forms"])


def measured(opcode: str) -> bool:
    """Whether the machines may evaluate ``opcode`` (its form was measured equal on the GPU)."""
    return opcode in forms() or opcode.split(".", 1)[0] in ADDRESS_MODEL
