"""A buffer's optimum: the §5.4 layout with the same instructions (:func:`same_instructions`),
the searched (layout, instructions) pairs above the bytes/128 bound (:func:`searched`), and, for
a write-only ``nvmma_shared`` buffer, the best of its swizzle family and of equally coalesced
writers (:func:`nvmma_family`).

>>> same_instructions([], []).reason
'no modeled writer and reader pair'
"""

from __future__ import annotations

import re
from dataclasses import replace

from bankproof.models.errors import InputError
from bankproof.models.notation import triton_memory_text
from bankproof.models.swizzle import optimal_swizzle
from bankproof.verifier.engine.costs import access_bound, best_cost
from bankproof.verifier.results import FrozenMap
from bankproof.verifier.triton.accesses import BufferAccess, count_access, layouts_of, sm_of
from bankproof.verifier.triton.plans import cheapest_plan, legal_instructions, whole_buffer
from bankproof.verifier.triton.scan_records import AccessRow, BetterWriter, Optimum
from bankproof.verifier.triton.ttgir import Module


def same_instructions(parsed: list, rows: list[AccessRow]) -> Optimum:
    """The §5.4 layout for the buffer's first writer and first reader, counted for every access
    with the same instruction the chosen layout gets (so the gap compares like with like)."""
    chosen = sum(r.wavefronts or 0 for r in rows)
    if parsed and len(parsed) == len(rows) and chosen == sum(r.ideal or 0 for r in rows):
        # one wavefront per phase is a lower bound for any layout with the same instructions
        return Optimum(optimal_wavefronts=chosen, gap=0, reason="conflict-free: every access at its ideal")
    writers = [p for p in parsed if p[0].kind == "store"]
    readers = [p for p in parsed if p[0].kind == "load"]
    if not writers or not readers:
        return Optimum(optimal_wavefronts=None, gap=None, reason="no modeled writer and reader pair")
    (_, wd, bits), (_, rd, _) = writers[0], readers[0]
    chosen_instr = [r.instr for r in rows if r.instr is not None]
    try:
        s = optimal_swizzle(whole_buffer(wd), whole_buffer(rd), bits)
        total = 0
        for (a, dist, b), instr in zip(parsed, chosen_instr, strict=True):
            total += count_access(dist, s.layout, b, a.kind, [instr]).wavefronts or 0
    except (InputError, ValueError) as e:
        reason = f"§5.4 layout with the same instructions: {e}"
        return Optimum(optimal_wavefronts=None, gap=None, reason=reason)
    why = None
    if chosen == total:
        why = "the §5.4 layout for this writer and reader costs the same with these instructions"
        if not (wd.is_surjective() and rd.is_surjective()):
            why += " (subslice views extended to the whole buffer)"
    better = triton_memory_text(s.layout) if chosen > total else None
    return Optimum(optimal_wavefronts=total, gap=chosen - total, reason=why, better_layout=better)


def searched(parsed: list, chosen: int, known: int | None, sm: int) -> Optimum | None:
    """Above the bytes / 128 bound, search the (layout, instructions) pairs (``verifier/engine/choice.py``)
    for the buffer's first writer and reader, every access costed with the instructions its op
    could use; a cheaper pair than the same-instructions optimum (``known``) is the buffer's optimum."""
    if chosen <= sum(access_bound(dist, bits) for _, dist, bits in parsed):
        return None
    writers = [p for p in parsed if p[0].kind == "store"]
    readers = [p for p in parsed if p[0].kind == "load"]
    if not writers or not readers:
        return None
    (_, wd, bits), (_, rd, _) = writers[0], readers[0]
    try:
        best = cheapest_plan([(a.op.name, a.kind, dist, b) for a, dist, b in parsed], wd, rd, bits, sm)
    except (InputError, ValueError):
        return None
    if best is None or (known is not None and best[0] >= known):
        return None
    return Optimum(
        optimal_wavefronts=best[0],
        optimal_same_instructions=known,
        gap=chosen - best[0],
        better_layout=triton_memory_text(best[1]),
        better_instructions=tuple(best[2]),
        reason="another layout with other instructions (searched vectors and instructions) costs less",
    )


def nvmma_family(mod: Module, accs: list[BufferAccess], rows: list[AccessRow]) -> Optimum | None:
    """A write-only buffer in ``nvmma_shared`` (read by wgmma/tcgen05, which bankproof does not
    model) can only change within that family: the cheapest ``swizzlingByteWidth`` (0/32/64/128,
    same transposition and element width) for its writers, with the same instructions."""
    enc = accs[0].memdesc.encoding
    text = mod.aliases.get(enc[1:], enc) if enc.startswith("#") and "<" not in enc else enc
    if "nvmma_shared" not in text or "swizzlingByteWidth" not in text:
        return None
    best: tuple[int, str, list[str]] | None = None
    sm = sm_of(mod.target)
    for sw in (0, 32, 64, 128):
        cand = re.sub(r"swizzlingByteWidth = \d+", f"swizzlingByteWidth = {sw}", text)
        total, instrs = 0, []
        try:
            for a, r in zip(accs, rows, strict=True):
                dist, memory = layouts_of(mod, replace(a, memdesc=replace(a.memdesc, encoding=cand)))
                bits = a.memdesc.elem_bits or 8
                opts = list(dict.fromkeys([r.instr, *legal_instructions(a.op.name, a.kind, bits, sm)]))
                cost = best_cost(dist, a.kind, memory, bits, opts)
                if cost is None:
                    raise ValueError("no instruction")
                total += cost[0]
                instrs.append(cost[2])
        except (InputError, ValueError):
            continue
        if best is None or total < best[0]:
            best = (total, cand, instrs)
    if best is None:
        return None
    chosen = sum(r.wavefronts or 0 for r in rows)
    cheaper = best[0] < chosen
    return Optimum(
        optimal_wavefronts=min(best[0], chosen),
        gap=max(0, chosen - best[0]),
        reason="write-only nvmma_shared buffer: optimum over swizzlingByteWidth 0/32/64/128 and each "
        "writer's legal instructions",
        better_layout=best[1] if cheaper else None,
        better_instructions=tuple(best[2]) if cheaper and best[2] != [r.instr for r in rows] else None,
        better_writer=writer_family(mod, accs, rows, text),
    )


def writer_family(
    mod: Module, accs: list[BufferAccess], rows: list[AccessRow], text: str
) -> BetterWriter | None:
    """cp.async writers (every access of the buffer, one distributed layout) above their ideal: the
    cheapest equally coalesced writer (:mod:`bankproof.verifier.engine.writers`) on each swizzle width of
    the buffer's nvmma family, counted for every access."""
    from bankproof.verifier.engine.writers import cheapest_writer

    if any(a.op.name != "ttg.async_copy_global_to_local" for a in accs):
        return None
    chosen = sum(r.wavefronts or 0 for r in rows)
    if chosen <= sum(r.ideal or 0 for r in rows):
        return None
    a = accs[0]
    bits = a.memdesc.elem_bits or 8
    best, searched = None, 0
    own = re.search(r"swizzlingByteWidth = (\d+)", text)
    for sw in dict.fromkeys([int(own.group(1)) if own else 128, 0, 32, 64, 128]):  # the buffer's own first
        cand = re.sub(r"swizzlingByteWidth = \d+", f"swizzlingByteWidth = {sw}", text)
        try:
            pairs = [layouts_of(mod, replace(x, memdesc=replace(x.memdesc, encoding=cand))) for x in accs]
            if any(d != pairs[0][0] for d, _ in pairs):
                return None
            dist, memory = pairs[0]
            legal = legal_instructions(a.op.name, a.kind, bits, sm_of(mod.target))
            w = cheapest_writer(dist, memory, bits, legal)
        except (InputError, ValueError):
            continue
        if w is None:
            continue
        searched += w.searched
        if best is None or w.wavefronts < best[0].wavefronts:
            best = (w, cand)
    if best is None:
        return None
    w, cand = best
    total = w.wavefronts * len(accs)
    if total >= chosen:
        why = "no equally coalesced writer is cheaper"
        return BetterWriter(wavefronts=chosen, searched=searched, reason=why)
    return BetterWriter(
        wavefronts=total,
        per_access=w.wavefronts,
        instr=w.instr,
        layout=FrozenMap({k: tuple(tuple(b) for b in v) for k, v in w.layout.as_dict().items()}),
        shared=cand,
        searched=searched,
        reason="writers moving the same 128-byte global lines per warp instruction (lanes: any 5-dim "
        "subspace of the warp's contiguous-dimension bits), every nvmma swizzle width, the op's copy widths",
    )
