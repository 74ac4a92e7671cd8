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

>>> from bankproof.verifier.engine.spec import parse_spec
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
from dataclasses import replace

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.notation import memory_notations
from bankproof.verifier.engine.buffer_engines import Member, family
from bankproof.verifier.engine.check import ENGINES, verify
from bankproof.verifier.engine.costs import best_cost, matrix_options, vector_instr
from bankproof.verifier.engine.spec import Spec
from bankproof.verifier.results import ConstrainedSynthesis, FamilyMember, Proof, SynthResult


def constrained(
    spec: Spec, unconstrained: SynthResult | None, engines: tuple[str, ...] = ENGINES, timeout_s: float = 10.0
) -> ConstrainedSynthesis:
    """The constrained synthesis of ``spec`` (its ``engines``), beside ``unconstrained`` (the
    result of ``synth`` on the same spec, or None)."""
    t0 = time.perf_counter()
    fams: dict[str, dict[tuple, Member]] = {}
    refused: list[str] = []
    for e in spec.engines:
        members, why = family(e, spec.shape, spec.elem_bits, spec.arch)
        fams[e.name] = {m.key: m for m in members}
        refused += why
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
        key = unconstrained.layout.in_bases("offset")
        excluded = tuple(n for n in names if key not in fams[n])
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
    )


def _member(spec: Spec, taken: dict[str, Member], engines: tuple[str, ...], timeout_s: float) -> FamilyMember:
    """One layout of the family, counted with the spec's accesses (every engine asked)."""
    first = next(iter(taken.values()))
    lay = first.layout.transpose_outs(first.layout.out_dim_names)
    dims = spec.accesses[0].layout.out_dim_names if spec.accesses else spec.dims  # the accesses' names
    lay = type(lay)((("offset", lay.in_bases("offset")),), tuple(zip(dims, spec.shape, strict=True)))
    how = {n: m.label for n, m in taken.items()}
    forms = memory_notations(lay, spec.dims, 1024, spec.elem_bits)
    cute = forms.get("cute_bytes") or forms.get("cute") or forms["bases"]
    base = {"engines": how, "layout": cute, "offset": tuple(map(list, lay.in_bases("offset")))}
    try:
        rep = verify(replace(spec, memory=lay, memory_notation="bases", memory_text=str(base["offset"]),
                             accesses=_cheapest(spec, lay), engines=()), engines, timeout_s)  # fmt: skip
    except InputError as e:  # an access cannot use its instruction on this layout
        return FamilyMember(**base, wavefronts=None, verdict="refused", reason=str(e))
    counts = [a.wavefronts for a in rep.accesses]
    total = None if None in counts else sum(counts)
    used = {a.name: a.instr for a in rep.accesses}
    return FamilyMember(**base, wavefronts=total, verdict=rep.verdict, instructions=used)


def _cheapest(spec: Spec, lay) -> list:
    """The spec's accesses, each ``auto`` one given its cheapest instruction on ``lay`` (every
    ld/st width and ldmatrix/stmatrix form; on a lane-group target, ``auto`` as it stands)."""
    t = target.get(spec.arch)
    if t.model != "phases":
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


def _total(r: SynthResult | None) -> int | None:
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


__all__ = ["constrained"]
