"""What ptxas does to a kernel's shared instructions, read from its SASS (:func:`effects`, through
:mod:`.reconcile`), and what is said where the SASS is not at hand.

>>> NO_SASS.split(":")[0]
'counts rest on the PTX'
"""

from __future__ import annotations

from bankproof.verifier.kernel.reconcile import Fate, reconcile


def unseen_atomics(code, shared: set) -> dict[int, Fate]:
    """Without the SASS: every shared atomic of a measured form, each a fate that leaves it unknown
    (ptxas may run it otherwise: a constant increment as ATOMS.POPC.INC; only the SASS says)."""
    from bankproof.verifier.kernel.sites import classify

    out = {}
    for op in code.body:
        c = classify(op, shared)
        if c is not None and c[0] == "atom32":
            why = f"{c[1]} is counted only where the SASS shows the measured ATOMS form (the cuda extra)"
            out[op.index] = Fate(op.index, "split", (), why)
    return out


NO_SASS = (
    "counts rest on the PTX: ptxas and nvdisasm are not installed (the cuda extra), so what ptxas "
    "deletes or merges is predicted by measured rules (assumed)"
)


def effects(
    code, module_text: str, arch: str, shared: set, seconds: float, notes: list
) -> tuple[dict, list] | None:
    """What ptxas does to ``code``'s shared instructions, read from the SASS: index -> a
    :class:`~.ptxas.Merge` (merged: the carrier and its members) or a :class:`Fate` (deleted,
    split, disagree, rewritten); and the orphans' reasons. ``None`` where the SASS is not at hand
    (tools missing, time out, ptxas refuses): the caller predicts instead, and ``notes`` says so."""
    from bankproof.models.errors import TimeLimit
    from bankproof.verifier.kernel import ptxas, sass
    from bankproof.verifier.kernel.sites import classify

    if not arch.startswith("sm"):
        return None
    try:
        dis = sass.disassemble_cached(module_text, arch, seconds)
    except TimeLimit:
        notes.append(f"the SASS was not built within {seconds:.0f} s: {NO_SASS.split(': ', 1)[1]}")
        return None
    if dis is None:
        notes.append(NO_SASS)
        return None
    if dis.error:
        notes.append(f"{dis.error}; counts rest on the PTX (assumed)")
        return None
    classes = {op.index: c for op in code.body if (c := classify(op, shared)) is not None}
    r = reconcile(code.body, classes, list(dis.ops), code.name, dis.tools.text())
    out: dict = {}
    for i, f in r.fates.items():
        if f.kind == "merged":
            out[i] = ptxas.Merge(f.members, f.size, f.delta, seen=True)
        elif f.kind != "kept":
            out[i] = f
    notes.append(f"what runs is read from the SASS ({r.tools}, -arch={dis.arch}): PTX shared instructions "
                 "ptxas removed count nothing, merged ones count as the SASS access")  # fmt: skip
    return out, list(r.orphans)
