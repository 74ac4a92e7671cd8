"""Conversions: how to move a tensor from the problem's first layout (source) into its second
(destination), with proofs: a warp-shuffle plan when no data crosses warps, and the round trip
through shared memory (the problem's memory layout, else the synthesized one).

>>> from bankproof.verifier.api.spec_file import parse_spec
>>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
>>> cols = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
...         "warpsPerCTA = [1, 1], order = [0, 1]}>")
>>> spec = parse_spec({"shape": [32, 32], "dtype": "f32", "access": [
...     {"name": "rows", "kind": "store", "layout": {"triton": rows}},
...     {"name": "cols", "kind": "load", "layout": {"triton": cols}}]}, require_memory=False)
>>> r = convert(spec)
>>> r.verdict, r.shuffle.possible, r.shared_memory.proof.status
('proved', True, 'proved')
"""

from __future__ import annotations

from bankproof.models.conversion import shuffle_plan
from bankproof.models.errors import InputError
from bankproof.models.lane_construction import lane_groups
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import memory_notations
from bankproof.models.swizzle import optimal_swizzle
from bankproof.verifier.engine.answer import combine
from bankproof.verifier.engine.spec import Spec
from bankproof.verifier.results import (
    SCHEMA,
    ConversionProof,
    ConvertResult,
    SharedRoundTrip,
    ShufflePlanResult,
    ShuffleRound,
)


def _proof(p) -> ConversionProof:
    return ConversionProof(p.status, "z3", round(p.seconds, 4), p.reason or None, p.model or None)


def convert(spec: Spec, timeout_s: float = 10.0) -> ConvertResult:
    """Plan and prove the conversion of ``spec``'s first access layout into its second."""
    from bankproof.proofs.conversion import shared_roundtrip, shuffle_plan_correct  # z3 only when used

    if len(spec.accesses) < 2:
        raise InputError("spec", "access", "must list the source layout then the destination layout")
    src, dst = spec.accesses[0], spec.accesses[1]
    ms = max(1, int(timeout_s * 1000))  # 0 would mean no limit to Z3
    statuses = []
    try:
        plan = shuffle_plan(src.layout, dst.layout, spec.elem_bits, spec.dims)
    except InputError as e:
        shuffle = ShufflePlanResult(possible=False, reason=e.problem)
    else:
        proof = shuffle_plan_correct(plan, src.layout, dst.layout, ms)
        statuses.append(proof.status)
        sp = plan.space

        def names(vs) -> tuple[str, ...]:
            return tuple(sp.name(v) for v in vs)

        shuffle = ShufflePlanResult(
            possible=True,
            vectorization=names(plan.vec),
            inter=names(plan.inter),
            e=names(plan.e),
            f=names(plan.f),
            g=names(plan.g),
            r=names(plan.r),
            rounds=tuple(ShuffleRound(tuple(r.src), tuple(r.send), tuple(r.recv)) for r in plan.rounds),
            shuffles_per_round=plan.shuffles_per_round,
            elements_per_shuffle_lane=1 << len(plan.vec),
            proof=_proof(proof),
        )
    memory, origin = spec.memory, "the spec's"
    if memory is None:
        groups = lane_groups(spec.arch)  # a lane-group target: the construction over its groups
        memory = optimal_swizzle(
            src.layout, dst.layout, spec.elem_bits, dim_names=spec.dims, groups=groups
        ).layout
        origin = "the synthesized"
    proof = shared_roundtrip(src.layout, dst.layout, memory, None, ms)
    statuses.append(proof.status)
    mem_text = (
        memory_notations(memory, spec.dims).get("formula", "")
        if isinstance(memory, LinearLayout)
        else "(padded)"
    )
    return ConvertResult(
        schema=SCHEMA,
        spec=spec.path,
        source=src.name,
        destination=dst.name,
        shuffle=shuffle,
        shared_memory=SharedRoundTrip(origin, mem_text, _proof(proof)),
        verdict=combine(statuses),
        shape=tuple(spec.shape),
        dtype=spec.dtype,
    )
