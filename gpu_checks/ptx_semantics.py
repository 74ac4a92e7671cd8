"""Replaying the PTX semantics oracle's record (``lab/gpu/ptx_semantics.py``: each instruction form
the machine evaluates, run on the device on edge and random operands) against the machine's own
evaluation (:func:`bankproof.verifier.kernel.values.arith`): each case equal, refused by the machine
(unknown), or a mismatch.

>>> replay_case({"op": "add.s32", "kinds": ["r", "r", "r"], "in": [5, (1 << 32) - 1], "out": 4})
'equal'
>>> replay_case({"op": "add.s32", "kinds": ["r", "r", "r"], "in": [5, 1], "out": 7})
'mismatch'
"""

from __future__ import annotations

from bankproof.verifier.kernel.values import Value, arith

WIDTH = {"h": 16, "r": 32, "l": 64, "p": 1}


def _pattern(x: int, kind: str) -> int:
    """A source operand as the device's register held it, as the machine holds one (int64)."""
    if kind == "p":
        return int((x & 0xFFFFFFFF) != 0)
    v = x & ((1 << WIDTH[kind]) - 1)
    return v - (1 << 64) if v >> 63 else v


def replay_case(case: dict) -> str:
    """``equal``, ``refused`` (the machine leaves the result unknown) or ``mismatch``."""
    op, kinds = case["op"], case["kinds"]
    opcode, _, lut = op.partition(" LUT")
    srcs = [Value.const(_pattern(x, k), 1) for x, k in zip(case["in"], kinds[1:], strict=False)]
    if lut:
        srcs.append(Value.const(int(lut), 1))
    got = arith(opcode, srcs)
    if got is None or not bool(got.k[0]):
        return "refused"
    mask = (1 << WIDTH[kinds[0]]) - 1
    return "equal" if int(got.v[0]) & mask == case["out"] & mask else "mismatch"


__all__ = ["replay_case", "WIDTH"]
