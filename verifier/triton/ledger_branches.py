"""The conditions a ledger entry runs under: ``scf.if`` arms and early returns the arguments may
decide (an arm ruled out runs 0 times; an arm on a counter its loop cycles runs on the iterations
the cycle gives), and guard predicates that rest on run-time values; undecided ones are named, and
the totals become ranges over them (``ledger_totals._arms``).

>>> entry = {"executions": 4}
>>> branches(entry, (), None, ())
>>> entry
{'executions': 4}
"""

from __future__ import annotations

from bankproof.verifier.ptx import SharedOp
from bankproof.verifier.triton.ledger_machine import GUARD_KEY
from bankproof.verifier.triton.scalars import Cond, loop_hits


def guard(entry: dict, grp: list[SharedOp]) -> None:
    """An instruction under a guard predicate that rests on run-time values may be off in whole
    warps, which then issue nothing: its count is a range from none of them to every warp that
    reaches it, like an undecided branch arm (a run of the launch decides it)."""
    guarded = [o for o in grp if o.unknown.startswith("the predicate")]
    if not guarded or entry.get("executions") == 0:
        return
    neg, reg = guarded[0].ins.guard
    pred = f"@{'!' if neg else ''}{reg} (PTX line {guarded[0].ins.line})"
    entry.setdefault("condition", []).append(f"the guard {pred} holds in the warp")
    entry.setdefault("condition_key", []).append([GUARD_KEY + str(guarded[0].ins.line), True])
    entry.setdefault("depends_on", []).append(f"the guard {pred}")
    entry.setdefault("condition_why", "the guard predicate depends on run-time values")


def branches(entry: dict, conds, args, loops) -> None:
    """The branch arms an entry runs under (``scf.if``, an early return's ``cf.cond_br``): an arm
    the arguments rule out runs 0 times; an arm on a counter its loop cycles (a flattened
    persistent loop's epilogue) runs on the iterations the cycle gives; arms the arguments cannot
    decide are named (``condition``), and the totals become ranges over them."""
    undecided = []
    for c in conds:
        d = c.decide(args)
        cyc = None if d is not None else cycle(c, loops, args)
        if cyc is not None and entry.get("executions") is not None:
            (count, trips), why = cyc
            entry["executions"] = entry["executions"] // max(1, trips) * count
            entry.setdefault("cycles", []).append(why)
            continue
        if d is False:
            entry["executions"] = 0
            entry["not_run"] = f"{c.text()} is false here"
            entry.pop("executions_reason", None)
            return
        if d is None:
            undecided.append(c)
    if undecided:
        entry["condition"] = [c.text() for c in undecided]
        entry["condition_key"] = [[c.name, c.arm] for c in undecided]
        entry["depends_on"] = [Cond(c.name, True, c.defs).text() for c in undecided]
        entry["condition_why"] = undecided[0].why(args)


def cycle(c, loops, args) -> tuple[tuple[int, int], str] | None:
    """``((iterations the arm runs, the loop's trips), why)`` for a condition on a counter one of
    ``loops`` carries around a cycle (:func:`~bankproof.verifier.triton.scalars.loop_hits`)."""
    for lp in loops:
        trips = lp.trips(args)
        if trips is None or not lp.carried:
            continue
        got = loop_hits(c, lp.carried, trips, args)
        if got is not None:
            return (got[0], trips), got[1]
    return None


def site_conds(sites: list) -> tuple:
    """The branch arms every TTGIR op at one source location runs under (in nesting order)."""
    if not sites:
        return ()
    common = set(sites[0].conds).intersection(*(s.conds for s in sites[1:]))
    return tuple(c for c in sites[0].conds if c in common)
