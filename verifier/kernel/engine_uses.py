"""What the PTX machine records of the engines that use shared memory besides the LSU: each TMA
copy's shared box and the parameter holding its tensor map (from its issuing lane), each wgmma's two
operand descriptors (from the first lane of each warpgroup that issues it). The API checks them
against each other with ``bankproof agree``'s rules.

>>> from bankproof.verifier.kernel.records import EngineUse
>>> EngineUse(0, 0, descriptors=(None, 1 << 62)).descriptors[1] > 0
True
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.verifier.kernel.records import EngineUse
from bankproof.verifier.kernel.sites import MachineOp
from bankproof.verifier.ptx.module import Op

_MEM = re.compile(r"\[\s*([^\]]*?)\s*\]")


def record_engine_use(
    machine,  # the PTX machine running the CTA
    op: Op,
    kind: MachineOp,
    on: np.ndarray,
    present: np.ndarray,
    pc: int,
) -> None:
    """A TMA copy's shared box and tensor-map parameter (from its issuing lane), or a wgmma's two
    descriptors (from the first lane of each warpgroup that issues it)."""
    rows = machine.engines.setdefault(pc, [])
    lanes = on.reshape(machine.warps, 32)
    seen_groups: set[int] = set()
    for w in present.tolist():
        hits = np.flatnonzero(lanes[w])
        if not hits.size:
            continue
        t = 32 * w + int(hits[0])
        execution = machine.count.get((pc, -1 - w), 0)
        machine.count[(pc, -1 - w)] = execution + 1
        if kind.family == "tma":
            if kind.name == "tma.store":  # it reads a tile: it writes none
                continue
            addr = machine.address(op)
            inner = _MEM.search(op.operands[1]) if len(op.operands) > 1 else None
            reg = inner.group(1).split(",")[0].strip() if inner else ""
            where = int(addr.v[t]) if addr.k[t] else None
            rows.append(EngineUse(w, execution, where, machine.plan.param_of.get(machine.reg_name(reg, op))))
        elif w // 4 not in seen_groups:
            seen_groups.add(w // 4)
            descs = []
            for o in op.operands[1:3]:
                v = None if o.startswith("{") else machine.value(o, op)
                descs.append(None if v is None or not v.k[t] else int(v.v[t]) & ((1 << 64) - 1))
            rows.append(EngineUse(w, execution, descriptors=(descs[0], descs[1])))
