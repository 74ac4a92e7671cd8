"""``bankproof convert``: how to convert the spec's first layout (source) into its second
(destination), with proofs: a warp-shuffle plan when no data crosses warps, and the round trip
through shared memory (the spec's memory layout, else the synthesized one)."""

from __future__ import annotations

import argparse
import json
import sys

from bankproof.models.conversion import shuffle_plan
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import memory_notations
from bankproof.models.swizzle import optimal_swizzle
from bankproof.verifier import report
from bankproof.verifier.spec import load_spec


def _names(sp, vs):
    return " ".join(sp.name(v) for v in vs) if vs else "∅"


def run(args: argparse.Namespace) -> int:
    from bankproof.proofs.conversion import shared_roundtrip, shuffle_plan_correct  # z3 only when used

    spec = load_spec(args.spec, require_memory=False)
    if len(spec.accesses) < 2:
        raise InputError("spec", "access", "must list the source layout then the destination layout")
    src, dst = spec.accesses[0], spec.accesses[1]
    ms = int(args.timeout * 1000)
    out: dict = {"schema": 1, "spec": spec.path, "source": src.name, "destination": dst.name}
    lines = [f"convert {src.name!r} -> {dst.name!r} ({'x'.join(map(str, spec.shape))} {spec.dtype})"]
    statuses = []
    try:
        plan = shuffle_plan(src.layout, dst.layout, spec.elem_bits, spec.dims)
    except InputError as e:
        plan = None
        out["shuffle"] = {"possible": False, "reason": e.problem}
        lines.append(f"warp shuffles: not possible ({e.problem})")
    if plan is not None:
        proof = shuffle_plan_correct(plan, src.layout, dst.layout, ms)
        statuses.append(proof.status)
        sp = plan.space
        out["shuffle"] = {
            "possible": True,
            "vectorization": [sp.name(v) for v in plan.vec],
            "I": [sp.name(v) for v in plan.inter],
            "E": [sp.name(v) for v in plan.e],
            "F": [sp.name(v) for v in plan.f],
            "G": [sp.name(v) for v in plan.g],
            "R": [sp.name(v) for v in plan.r],
            "rounds": [{"src": r.src, "send_register": r.send, "recv_register": r.recv} for r in plan.rounds],
            "shuffles_per_round": plan.shuffles_per_round,
            "elements_per_shuffle_lane": 1 << len(plan.vec),
            "proof": {
                "status": proof.status,
                "engine": "z3",
                "seconds": round(proof.seconds, 4),
                **({"reason": proof.reason} if proof.reason else {}),
                **({"counterexample": proof.model} if proof.model else {}),
            },
        }
        lines += [
            f"warp shuffles (§5.4): V = {_names(sp, plan.vec)}; I = {_names(sp, plan.inter)}; "
            f"E = {_names(sp, plan.e)}; F = {_names(sp, plan.f)}",
            f"  G = {_names(sp, plan.g)}; R = {_names(sp, plan.r)}",
            f"  {len(plan.rounds)} round(s) x {plan.shuffles_per_round} shuffle(s), "
            f"{1 << len(plan.vec)} element(s) per lane per round",
        ]
        for i, r in enumerate(plan.rounds[:4]):
            lines.append(
                f"  round {i}: lane t reads lane {r.src[:8]}...; sends A reg {r.send[:8]}...; "
                f"stores B reg {r.recv[:8]}..."
            )
        if len(plan.rounds) > 4:
            lines.append(f"  ... {len(plan.rounds) - 4} more round(s) (--json lists all)")
        lines.append(
            f"  proof: {proof.status} by z3 in {proof.seconds:.2f} s"
            + (f" ({proof.reason})" if proof.reason else "")
        )
    memory, origin = spec.memory, "the spec's"
    if memory is None:
        memory, origin = (
            optimal_swizzle(src.layout, dst.layout, spec.elem_bits, dim_names=spec.dims).layout,
            "the synthesized",
        )
    proof = shared_roundtrip(src.layout, dst.layout, memory, None, ms)
    statuses.append(proof.status)
    mem_text = (
        memory_notations(memory, spec.dims).get("formula", "")
        if isinstance(memory, LinearLayout)
        else "(padded)"
    )
    out["shared_memory"] = {
        "memory": origin,
        "formula": mem_text,
        "proof": {
            "status": proof.status,
            "engine": "z3",
            "seconds": round(proof.seconds, 4),
            **({"reason": proof.reason} if proof.reason else {}),
            **({"counterexample": proof.model} if proof.model else {}),
        },
    }
    lines.append(
        f"through shared memory ({origin} layout {mem_text}): every destination thread reads the element "
        f"it names: {proof.status} by z3 in {proof.seconds:.2f} s"
        + (f" ({proof.reason})" if proof.reason else "")
    )
    verdict = "refuted" if "refuted" in statuses else "unknown" if "unknown" in statuses else "proved"
    out["verdict"] = verdict
    lines.append(f"verdict: {verdict} (exit {report.exit_code(verdict)})")
    sys.stdout.write(json.dumps(out) + "\n" if args.json else "\n".join(lines) + "\n")
    return report.exit_code(verdict)
