"""The ledger's totals per CTA by Nsight Compute op class, from its entries' counts and
executions: exact where every entry is, a range over the branch arms the arguments do not decide.

>>> e = {"family": "lsu", "instr": "st32", "counted": True, "executions": 3, "ideal": 2,
...      "total_wavefronts": 12, "total_instructions": 6}
>>> t = totals([e])["st"]
>>> t.wavefronts, t.instructions, t.ideal
(12, 6, 6)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from bankproof.verifier.results import FrozenMap
from bankproof.verifier.results.decode import decode
from bankproof.verifier.triton.ledger_records import ClassTotal
from bankproof.verifier.triton.measured_rules import GUARDED_CG_NOTE, guarded_cg_range


def op_class(family: str, instr: str, cache: Sequence[str] | None = None) -> str:
    """The Nsight Compute op class an entry's wavefronts are counted under.

    >>> op_class("lsu", "ld128"), op_class("lsu", "ldsm.x4.trans"), op_class("ldgsts", "cp16", ("cg",))
    ('ld', 'ldsm', 'ldgsts_bypass')
    """
    if family == "ldgsts":
        return "ldgsts_bypass" if tuple(cache or ()) == ("cg",) else "ldgsts"
    return instr.split(".")[0].rstrip("0123456789") if not instr.startswith(("ldsm", "stsm")) else instr[:4]


def totals(entries: list[dict]) -> Mapping[str, ClassTotal]:
    """The totals of a ledger's entries (drafts, as :func:`~.ledger.build` writes them) by op
    class (:func:`_class_totals`), and wgmma's shared operand reads (``gmma``)."""
    sums = _class_totals(entries)
    gmma = [e for e in entries if e.get("gmma_wavefronts") is not None]
    if gmma:  # wgmma's shared operand reads (op_gmma), from each instruction's shape and operands
        known = all(e.get("executions") is not None for e in gmma)
        wf = sum(e["gmma_wavefronts"] * e["executions"] for e in gmma) if known else None
        ins = sum(e["instructions"] * e["executions"] for e in gmma) if known else None
        sums["gmma"] = {"wavefronts": wf, "instructions": ins, "note": gmma[0]["gmma_note"]}
        cond = [e for e in gmma if e.get("condition_key")]
        if not known and not cond:  # trip counts left open: the total as a formula in them
            formula = _formula([{**e, "wavefronts": e["gmma_wavefronts"]} for e in gmma])
            if formula is not None:
                sums["gmma"]["formula"] = formula
        if cond and wf is not None:  # under a branch the arguments do not decide: a range, never a number
            lo = wf - sum(e["gmma_wavefronts"] * e["executions"] for e in cond)
            sums["gmma"].update(wavefronts=None, instructions=None, range={"wavefronts": [lo, wf]},
                                depends_on=sorted({e["depends_on"][0] for e in cond}))  # fmt: skip
    return FrozenMap({cls: decode(ClassTotal, t, f"ledger total {cls}") for cls, t in sums.items()})


def _class_totals(entries: list[dict]) -> dict:
    """Per CTA: wavefronts and instructions by op class (``ld``, ``st``, ``ldsm``, ``stsm``,
    ``ldgsts``, ``ldgsts_bypass``), ``None`` where an entry's count or executions are unknown.
    Where entries run under branch arms the arguments do not decide, the class's counts are
    ``None`` too, ``range`` gives ``{"wavefronts": [lo, hi], "instructions": [lo, hi]}`` over the
    arms (one arm of each branch runs) and ``depends_on`` names the conditions. A cp.async whose
    rows are under a 128-byte line opens the wavefronts the same way (store count to lines)."""
    by_class: dict[str, list[dict]] = defaultdict(list)
    for e in entries:
        if e.get("counted"):
            by_class[op_class(e["family"], e["instr"], e.get("cache"))].append(e)
    out: dict[str, dict] = {}
    for cls, es in sorted(by_class.items()):
        known = all("total_wavefronts" in e for e in es)
        cond = [e for e in es if e.get("condition_key")]
        c: dict = {"wavefronts": None, "instructions": None}
        if cond:
            c["depends_on"] = sorted({e["depends_on"][0] for e in cond})
        lines = [e for e in es if "total_wavefronts_max" in e]
        if lines:
            c.setdefault("depends_on", []).append("global row strides (cp.async rows under a 128-byte line)")
        if not known and not cond and not lines:
            formula = _formula(es)
            if formula is not None:
                c["formula"] = formula
        if known:
            plain = [e for e in es if not e.get("condition_key")]
            w, i = sum(e["total_wavefronts"] for e in plain), sum(e["total_instructions"] for e in plain)
            w_hi = w + sum(e["total_wavefronts_max"] - e["total_wavefronts"] for e in lines if e in plain)
            if cond or lines:
                lo, hi = _arms(cond) if cond else ((0, 0), (0, 0))
                c["range"] = {"wavefronts": [w + lo[0], w_hi + hi[0]], "instructions": [i + lo[1], i + hi[1]]}
                if not cond:  # only the lines are open: the instructions are decided
                    c["instructions"] = i
            else:
                ideal = sum(e.get("ideal", 0) * e["executions"] for e in es)
                c.update(wavefronts=w, instructions=i, ideal=ideal)
                seen = guarded_cg_range(es, w)
                if seen is not None:
                    c.update(ncu_range=list(seen), ncu_note=GUARDED_CG_NOTE)
        out[cls] = c
    return out


def _arms(cond: list[dict]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The least and most (wavefronts, instructions) entries under undecided branches add: per
    branch (its first undecided condition), the cheaper arm's entries that depend on it alone, and
    the dearer arm's entries, all of them (at their most where a cp.async's lines are open)."""
    sums: dict[str, dict[bool, list[int]]] = {}
    for e in cond:
        (name, arm), alone = e["condition_key"][0], len(e["condition_key"]) == 1
        s = sums.setdefault(name, {True: [0, 0, 0, 0], False: [0, 0, 0, 0]})[arm]
        w, i = e["total_wavefronts"], e["total_instructions"]
        s[0], s[1] = s[0] + (w if alone else 0), s[1] + (i if alone else 0)
        s[2], s[3] = s[2] + e.get("total_wavefronts_max", w), s[3] + i
    lo = (sum(min(b[True][0], b[False][0]) for b in sums.values()),
          sum(min(b[True][1], b[False][1]) for b in sums.values()))  # fmt: skip
    hi = (sum(max(b[True][2], b[False][2]) for b in sums.values()),
          sum(max(b[True][3], b[False][3]) for b in sums.values()))  # fmt: skip
    return lo, hi


def _formula(es: list[dict]) -> dict | None:
    """The class's total as terms in the trip counts of loops the arguments leave open (each
    entry's per-execution count times its known trips times the open ones), or None when some
    entry's count, or the reason its executions are open, is not a loop's trip count.

    >>> lp = [{"ttgir_line": 9, "bounds": "", "trips": None, "unknown": "trips_L9"}, {"trips": 2}]
    >>> _formula([{"wavefronts": 4, "instructions": 2, "executions": None, "loops": lp},
    ...           {"wavefronts": 3, "instructions": 1, "executions": 1}])["wavefronts"]
    '3 + 8*trips_L9'
    """
    terms: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0])
    for e in es:
        w, k, names = e.get("wavefronts"), e.get("executions"), []
        if w is None:
            return None
        if k is None:
            if not e.get("loops"):
                return None
            k = 1
            for lp in e["loops"]:
                if lp["trips"] is not None:
                    k *= lp["trips"]
                elif lp.get("unknown"):
                    names.append(lp["unknown"])
                else:
                    return None
        t = terms[tuple(sorted(names))]
        t[0], t[1] = t[0] + w * k, t[1] + e["instructions"] * k
    if all(not names for names in terms):
        return None
    ordered = sorted(terms.items(), key=lambda kv: (len(kv[0]), kv[0]))
    return {
        "wavefronts": _text([(n, t[0]) for n, t in ordered]),
        "instructions": _text([(n, t[1]) for n, t in ordered]),
        "terms": [{"unknowns": list(n), "wavefronts": t[0], "instructions": t[1]} for n, t in ordered],
    }


def _text(terms: list[tuple[tuple[str, ...], int]]) -> str:
    """``96 + 64*trips_L57``: the constant first, then each product of unknowns (zero terms left out)."""
    parts = [
        str(c) if not n else "*".join(([str(c)] if c != 1 else []) + list(n)) for n, c in terms if c or not n
    ]
    return " + ".join(parts) or "0"
