"""Constrained synthesis: the cheapest memory layout among those every engine that touches the
buffer can take (a spec's ``[[engine]]`` tables: TMA boxes, wgmma/tcgen05 descriptor reads; see
:mod:`bankproof.verifier.engine.buffer_engines`), with the spec's accesses counted on each.

The family is finite and enumerated whole: on every layout all the engines take, each access the
spec leaves ``auto`` gets its cheapest instruction (every ld/st width and ldmatrix/stmatrix form),
and the counts are verified by the engines the caller asks for (enumeration, Lemma 9.4, Z3), so the
cheapest layout is optimal over the family and those instructions by exhaustion, ``proved`` when
every member's count is. An access that cannot use its
instruction on a member (an ldmatrix row that does not fit, say) excludes it, with its reason.
Beside it: the unconstrained optimum (``synth``'s), what the constraint costs, and which engines
cannot take the unconstrained layout.

>>> from bankproof.verifier.api.spec_file import parse_spec
>>> blocked = ("#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
...            "order = [1, 0]}>")
>>> spec = parse_spec({"shape": [64, 32], "dtype": "f32", "access": [{"kind": "store",
...                    "layout": {"triton": blocked}}], "engine": [{"tma": "any"}]}, require_memory=False)
>>> c = constrained(spec, None, ("enumeration",))
>>> c.optimal_wavefronts, [m.engines["tma 0"] for m in c.members if m.wavefronts == c.optimal_wavefronts][:1]
(64, ['none, 4 boxes of 32 bytes'])
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

from bankproof.models import target
from bankproof.models.errors import InputError, Untranslatable
from bankproof.models.memory import PaddedLayout, inverse_columns
from bankproof.models.notation import memory_notations
from bankproof.models.notation.padded import padded_notations
from bankproof.verifier.engine.buffer_engines import Member, family, padded_family
from bankproof.verifier.engine.check import ENGINES, verify
from bankproof.verifier.engine.costs import best_cost, matrix_options, vector_instr
from bankproof.verifier.engine.spec import Spec
from bankproof.verifier.results import ConstrainedSynthesis, FamilyMember, Proof, SynthResult, VerifyResult
from bankproof.verifier.results.verify import PADDING

COSTS = ("wavefronts", "instructions", "operations", "xor_terms", "pad_terms", "shared_bytes")


def constrained(
    spec: Spec,
    unconstrained: SynthResult | None,
    engines: tuple[str, ...] = ENGINES,
    timeout_s: float = 10.0,
    weights: Mapping[str, float] | None = None,
    padded: bool = False,
) -> ConstrainedSynthesis:
    """The constrained synthesis of ``spec`` (its ``engines``), beside ``unconstrained`` (the
    result of ``synth`` on the same spec, or None); ``weights`` (per cost of :data:`COSTS`) pick
    one layout of the Pareto front. ``padded`` (a spec without engines): the family is the
    synthesized layout, the plain row- and column-major ones and each padded (the engine named
    :data:`PADDING`), weighed by the same costs, shared bytes among them."""
    t0 = time.perf_counter()
    fams: dict[str, dict[tuple, Member]] = {}
    refused: list[str] = []
    for e in spec.engines:
        members, why = family(e, spec.shape, spec.elem_bits, spec.arch)
        fams[e.name] = {m.key: m for m in members}
        refused += why
    if padded:  # no engine: the synthesized layout against plain and padded ones
        plain = [Member("synthesized", unconstrained.layout, 0)] if unconstrained is not None else []
        fams[PADDING] = {m.key: m for m in plain + padded_family(spec.shape, spec.elem_bits)}
    names = tuple(fams)
    common = set.intersection(*(set(f) for f in fams.values())) if fams else set()
    keys = [k for k in next(iter(fams.values()), {}) if k in common]  # in the first engine's order
    members = tuple(_member(spec, {n: fams[n][k] for n in names}, engines, timeout_s) for k in keys)
    counted = [m for m in members if m.wavefronts is not None and m.verdict in ("proved", "refuted")]
    best = min(counted, key=lambda m: m.wavefronts) if counted else None
    exhaustive = bool(members) and all(m.verdict in ("proved", "refuted", "refused") for m in members)
    uncon = _total(unconstrained)
    excluded = ()
    if unconstrained is not None and unconstrained.layout is not None:
        key = Member("", unconstrained.layout).key
        excluded = tuple(n for n in names if key not in fams[n])
    front = pareto(members)
    chosen = _choose(members, front, weights) if weights else None
    status = "proved" if best is not None and exhaustive else "unknown"
    why = None if status == "proved" else _why_unknown(members, best)
    return ConstrainedSynthesis(
        engines=names,
        members=members,
        refused=tuple(refused),
        optimum=best,
        optimal_wavefronts=best.wavefronts if best else None,
        unconstrained_wavefronts=uncon,
        cost=best.wavefronts - uncon if best is not None and uncon is not None else None,
        excluded_by=excluded,
        proof=Proof(status, "exhaustion", round(time.perf_counter() - t0, 4), why),
        empty=None if members else _empty(fams, spec),
        pareto=front,
        weights=dict(weights) if weights else None,
        chosen=chosen,
    )


def pareto(members: tuple[FamilyMember, ...]) -> tuple[int, ...]:
    """The members (indices) no other counted member beats in every cost and strictly in one.

    >>> m = lambda w, i: FamilyMember({}, "", (), w, "proved", costs={"wavefronts": w, "instructions": i})
    >>> pareto((m(64, 32), m(128, 16), m(128, 32), m(64, 32)))
    (0, 1, 3)
    """
    vec = {i: tuple(m.costs[c] for c in COSTS if c in m.costs) for i, m in enumerate(members) if m.costs}

    def beats(a: tuple, b: tuple) -> bool:
        return all(x <= y for x, y in zip(a, b, strict=True)) and a != b

    return tuple(i for i, v in vec.items() if not any(beats(w, v) for j, w in vec.items() if j != i))


def read_weights(weights: object, where: str = "synth") -> dict[str, float] | None:
    """Weights per cost (``{"wavefronts": 1, "operations": 8}``), checked and named in errors."""
    if weights is None:
        return None
    if not isinstance(weights, Mapping) or not weights:
        raise InputError(where, "weights", f"must map some of {', '.join(COSTS)} to numbers", weights)
    for k, v in weights.items():
        if k not in COSTS:
            raise InputError(where, "weights", f"names costs of {', '.join(COSTS)}", k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1e9:
            raise InputError(where, "weights", f"{k} must be a number from 0 to 1e9", v)
    return {k: float(v) for k, v in weights.items()}


def _choose(
    members: tuple[FamilyMember, ...], front: tuple[int, ...], weights: Mapping[str, float]
) -> int | None:
    """The front's member of least weighted cost (the first on a tie)."""
    if not front:
        return None
    return min(front, key=lambda i: sum(w * members[i].costs[c] for c, w in weights.items()))


def _member(spec: Spec, taken: dict[str, Member], engines: tuple[str, ...], timeout_s: float) -> FamilyMember:
    """One layout of the family, counted with the spec's accesses (every engine asked)."""
    first = next(iter(taken.values()))
    dims = spec.accesses[0].layout.out_dim_names if spec.accesses else spec.dims  # the accesses' names
    padded = isinstance(first.layout, PaddedLayout)
    lin = first.layout.linear if padded else first.layout
    lin = type(lin)((("offset", lin.in_bases("offset")),), tuple(zip(dims, spec.shape, strict=True)))
    lay = PaddedLayout(lin, first.layout.intervals) if padded else lin
    how = {n: m.label for n, m in taken.items()}
    if padded:
        forms = padded_notations(lay)
        text = forms.get("cute") or forms.get("triton") or str(lay.intervals)
    else:
        forms = memory_notations(lin, spec.dims, 1024, spec.elem_bits)
        text = forms.get("cute_bytes") or forms.get("cute") or forms["bases"]
    base = {"engines": how, "layout": text, "offset": tuple(map(list, lin.in_bases("offset")))}
    try:
        rep = verify(replace(spec, memory=lay, memory_notation="bases", memory_text=text,
                             accesses=_cheapest(spec, lay), engines=()), engines, timeout_s)  # fmt: skip
    except InputError as e:  # an access cannot use its instruction on this layout (no model for it: unknown)
        verdict = "unknown" if isinstance(e, Untranslatable) else "refused"
        return FamilyMember(**base, wavefronts=None, verdict=verdict, reason=str(e))
    total = _total(rep)
    used = {a.name: a.instr for a in rep.accesses}
    costs = None
    if total is not None:
        inverse = () if padded else inverse_columns(lin) or ()
        size = lay.span() if padded else 1 << len(lin.in_bases("offset"))
        costs = {"wavefronts": total, "instructions": sum(a.instructions for a in rep.accesses),
                 "operations": sum(m.operations for m in taken.values()),
                 "xor_terms": sum(bin(x).count("1") - 1 for x in inverse if x),
                 "pad_terms": len(lay.intervals) if padded else 0,
                 "shared_bytes": size * spec.elem_bits // 8}  # fmt: skip
    why = next((a.proof.reason for a in rep.accesses if a.wavefronts is None and a.proof.reason), None)
    return FamilyMember(**base, wavefronts=total, verdict=rep.verdict, instructions=used, costs=costs,
                        reason=why if total is None else None)  # fmt: skip


def _cheapest(spec: Spec, lay) -> list:
    """The spec's accesses, each ``auto`` one given its cheapest instruction on ``lay`` (every
    ld/st width and ldmatrix/stmatrix form; on a lane-group target, ``auto`` as it stands)."""
    t = target.get(spec.arch)
    if not t.picks_instructions:
        return spec.accesses
    out = []
    for a in spec.accesses:
        if a.instr == "auto":
            widths = [b for b in (8, 16, 32, 64, 128) if b >= spec.elem_bits]
            opts = [vector_instr(a.kind, b) for b in widths] + matrix_options(
                a.kind, spec.elem_bits, t.has("stsm.x4")
            )
            best = best_cost(a.layout, a.kind, lay, spec.elem_bits, opts)
            a = replace(a, instr=best[2]) if best else a
        out.append(a)
    return out


def _total(r: VerifyResult | None) -> int | None:
    """The accesses' wavefronts summed (None where one is unknown, or no result)."""
    if r is None:
        return None
    counts = [a.wavefronts for a in r.accesses]
    return None if None in counts else sum(counts)


def _why_unknown(members: tuple[FamilyMember, ...], best: FamilyMember | None) -> str:
    if not members:
        return "no layout is left: see empty"
    bad = [m for m in members if m.verdict not in ("proved", "refuted", "refused")]
    if bad:
        return f"{len(bad)} of {len(members)} layouts not counted by every engine (verdict {bad[0].verdict})"
    return (
        "every layout the engines take is refused by an access"
        if best is None
        else "not every count is proved"
    )


def _empty(fams: dict[str, dict[tuple, Member]], spec: Spec) -> str:
    """Which engines exclude each other (or take nothing of this tile alone)."""
    alone = [n for n, f in fams.items() if not f]
    if alone:
        return f"{', '.join(alone)} take{'s' if len(alone) == 1 else ''} no layout of this {spec.dtype} tile"
    names = list(fams)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if not set(fams[a]) & set(fams[b])]
    if pairs:
        return "; ".join(f"{a} and {b} take no layout in common" for a, b in pairs)
    return f"{', '.join(names)} take no layout in common (each pair does, all of them do not)"


__all__ = ["COSTS", "PADDING", "constrained", "pareto", "read_weights"]
