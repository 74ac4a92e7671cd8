"""Each enumerated instruction checked by a second engine where its addresses allow one
(:mod:`.linear`): the instruction's layout given to ``bankproof verify`` (Lemma 9.4 and a Z3 proof
over every lane, warp and iteration bit), its verdict and count compared with the enumeration's,
the bad directions reported; a disagreement is a ``disagree`` verdict (exit 4). Layouts that differ
only by a constant are proved once; the pass stops proving after a time budget (and says so).

>>> BUDGET_S
5.0
"""

from __future__ import annotations

import time
from dataclasses import replace

from bankproof.verifier.kernel import linear
from bankproof.verifier.kernel.records import InstructionReport, Trace
from bankproof.verifier.results import EngineResult, FrozenMap

BUDGET_S = 5.0


def cross_check(
    reports: list[InstructionReport],
    code,
    trace: Trace,
    merge_of: dict,
    notes: list,
    engines: tuple[str, ...] = ("enumeration", "algebra", "z3"),
) -> list:
    """``reports`` with the second engine's answer (``engines`` of the layout's: the algebra, Z3)
    and ``bad_direction`` where it applies."""
    op_of = {o.ptx_line: o for o in code.body}
    cache: dict = {}
    start = time.monotonic()
    out = []
    for r in reports:
        op = op_of[r.ptx_line]
        inst = trace.instances.get(op.index)
        eligible = (
            r.family == "lsu"
            and r.verdict in ("proved", "refuted")
            and r.wavefronts is not None  # a misaligned access has no count to check
            and not r.instr.startswith(("ldsm", "stsm"))
            and inst is not None
            and bool(r.instructions)
            and op.index not in merge_of
            and bool(inst.known.all())
            and bool(inst.active.all())
        )
        if not eligible:
            out.append(r)
            continue
        got = linear.bases(inst.offsets, inst.warp, inst.execution)
        if got is None:
            out.append(r)
            continue
        kind = "load" if r.instr.startswith("ld") else "store"
        width = int(r.instr[2:].rstrip("b")) // 8
        imgs = dict(got[1])
        repeat = 1 << sum(1 for b in imgs["register"] if b == 0)  # executions at the same addresses
        imgs["register"] = [b for b in imgs["register"] if b != 0]
        key = (kind, width, tuple(tuple(v) for v in imgs.values()))
        if key not in cache:
            if time.monotonic() - start > BUDGET_S:
                notes.append(
                    f"the second engine stopped after {BUDGET_S:g} s; later instructions are enumerated only"
                )
                out.append(r)
                continue
            cache[key] = linear.verify_instruction(kind, width, imgs, engines=engines)
        out.append(_merge(r, cache[key], repeat))
    return out


def _merge(r: InstructionReport, got, repeat: int) -> InstructionReport:
    """``repeat``: executions the layout folds into one (an iteration that reads the same addresses
    again is one instruction of the layout, ``repeat`` of the kernel). The report's answer gains the
    layout's engines (their counts scaled to the kernel's) beside the enumeration, and their proof."""
    if got is None:
        return r
    acc, elem = got
    total = None if acc.wavefronts is None else acc.wavefronts * repeat
    if not (total == r.wavefronts and acc.verdict == r.verdict):
        why = (f"the enumeration counts {r.wavefronts} wavefronts ({r.verdict}); the layout's engines "
               f"{total} ({acc.verdict})")  # fmt: skip
        return r.with_answer(verdict="disagree", reason=why, conflict_free=None)
    scaled = {
        name: replace(e, wavefronts=None if e.wavefronts is None else e.wavefronts * repeat)
        for name, e in acc.engines.items()
        if name != "enumeration"
    }
    mine = EngineResult(r.wavefronts, r.verdict, reason=ENUMERATED)
    alg = acc.engines.get("algebra")
    names = alg.conflict_directions if alg and r.verdict == "refuted" else None
    bad = linear.directions(names, elem)
    engines = FrozenMap({"enumeration": mine, **scaled})
    return replace(r.with_answer(engines=engines, proof=acc.proof), bad_direction=bad)


ENUMERATED = "every dynamic instance of this CTA; the others: every lane, warp and iteration bit (F2-affine)"
