"""Every PTX shared-memory instruction against the SASS at its line (:mod:`.sass`): what the GPU
runs is what is counted.

Each PTX instruction's fate: ``kept`` (SASS of the same kind and width at its line, any number of
copies: an unrolled loop runs each copy fewer times), ``deleted`` (no SASS shared instruction at
its line, or only ``@!PT`` placeholders, which never run: it counts nothing), ``merged`` (a wider
SASS load or store at its line standing for it and the neighbours of one base whose lines have
none), ``increment`` (a constant atomic add run as ATOMS.POPC.INC), ``rewritten`` (an atomic run
as other instructions), ``split`` (SASS narrower, or mixed: unknown) or ``disagree`` (SASS of
another kind: the tool cannot explain it; exit 4). SASS shared instructions at a line with no PTX
shared instruction (``orphans``) make the kernel unknown at their line.

>>> from bankproof.verifier.kernel.sass import SassOp
>>> from bankproof.verifier.ptx.module import Op
>>> ops = [Op(0, 5, "ld.shared.u32", ("%r1", "[buf]"), None, 0, None, None),
...        Op(1, 6, "ld.shared.u32", ("%r2", "[buf+4]"), None, 0, None, None)]
>>> r = reconcile(ops, {0: ("lsu", "ld32"), 1: ("lsu", "ld32")}, [SassOp("k", 0, 5, "", "LDS.64", "")], "k")
>>> [(f.kind, f.members) for f in r.fates.values()]
[('merged', (0, 1)), ('merged', (0, 1))]
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from bankproof.models import atomic_rule
from bankproof.verifier.kernel.sass import SASS_ENGINES, SassOp, sass_kind, sass_known
from bankproof.verifier.ptx.module import Op

_ADDR = re.compile(r"^\[\s*([%\w$]+)\s*(?:\+\s*(-?\d+))?\s*\]$")


UNMODELLED = "SASS not modelled"  # a report's status: the SASS runs it in a way no rule counts
DISAGREES = "SASS disagrees"  # a report's status: the SASS runs something the PTX does not explain


@dataclass(frozen=True)
class Fate:
    """What ptxas made of one PTX instruction (see the module docstring): ``sass`` the opcodes at
    its line; for ``merged``, the PTX instructions one SASS access stands for (``members``, the
    carrier first), its ``size`` in bytes and its start relative to the carrier (``delta``; ``None``:
    each lane's aligned window of ``size`` bytes holding its address, a lone load ptxas widened)."""

    index: int
    kind: str
    sass: tuple[str, ...]
    why: str
    members: tuple[int, ...] = ()
    size: int = 0
    delta: int | None = 0


@dataclass(frozen=True)
class Reconciliation:
    """Fates by PTX instruction index, and the SASS with no PTX origin (their reasons)."""

    tools: str
    fates: dict[int, Fate]
    orphans: tuple[str, ...]


def _bits(name: str) -> int:
    m = re.match(r"(?:ld|st)(\d+)$", name)
    return int(m.group(1)) if m else 0


def _address(op: Op) -> tuple[str, int] | None:
    mem = next((o for o in op.operands if o.strip().startswith("[")), "")
    m = _ADDR.match(mem.strip())
    return (m.group(1), int(m.group(2) or 0)) if m else None


def _same(ptx: tuple[str, str], sass: tuple[str, str]) -> bool:
    fam, name = ptx
    if fam == "ldgsts":
        return sass[0] == "ldgsts" and sass[1] == name.split(".")[0]
    return sass[1] == name and sass[0] in ("lsu", "generic")


_SASS_ADDR = re.compile(r"\[([^\]+]+?)(?:\s*\+\s*(-?0x[0-9a-f]+|-?\d+))?\]")


def _sass_address(s: SassOp) -> tuple[str, int] | None:
    """(base, immediate) of a SASS memory operand (``[R5+0x8]`` -> ``("R5", 8)``)."""
    m = _SASS_ADDR.search(s.operands)
    return (m.group(1).strip(), int(m.group(2) or "0", 0)) if m else None


def _blocks(body) -> dict[int, int]:
    """Instruction index -> its straight-line block's number (a label, a branch, a barrier or an
    exit starts a new one)."""
    out, n = {}, 0
    starts = set()
    for op in body:
        if op.base in ("bra", "brx", "bar", "barrier", "ret", "exit", "call"):
            starts.add(op.index + 1)
    for op in body:
        if op.index in starts:
            n += 1
        out[op.index] = n
    return out


def _reattribute(at: dict, ops: dict, classes: dict, lines: dict, blocks: dict) -> dict[int, str]:
    """ptxas's line table can give one PTX line the SASS of a neighbour of the same base (two LDS at
    line L, none at L+1): where the SASS's immediate offsets match the neighbours' PTX offsets one to
    one, the SASS moves to their lines; where neighbours without SASS cannot be matched, both are
    unknown (index -> why). Several copies of one access (an unrolled loop) stay where they are."""
    unsure: dict[int, str] = {}
    for line, here in list(at.items()):
        if len(lines[line]) != 1 or len(here) < 2:
            continue
        i = lines[line][0]
        a = _address(ops[i])
        addrs = [_sass_address(s) for s in here]
        kinds = {sass_kind(s.opcode) for s in here}
        if a is None or None in addrs or len(kinds) != 1 or len({b for b, _ in addrs}) != 1:
            continue
        near = [
            j for j in classes
            if j != i and blocks.get(j) == blocks.get(i) and classes[j] == classes[i]
            and len(lines[ops[j].ptx_line]) == 1 and not at.get(ops[j].ptx_line)
            and (b := _address(ops[j])) is not None and b[0] == a[0]
        ]  # fmt: skip
        imms = [o for _, o in addrs]
        if not near or len(set(imms)) != len(imms):
            continue
        by_off = {_address(ops[j])[1]: j for j in near}
        for k, mine in enumerate(imms):  # the k-th SASS access is this line's own
            shift = mine - a[1]
            owners = [by_off.get(o - shift) for o in imms]
            if all(owners[m] is not None for m in range(len(imms)) if m != k):
                for m, s in enumerate(here):
                    if m != k:
                        at[ops[owners[m]].ptx_line].append(s)
                at[line] = [here[k]]
                break
        else:
            others = ", ".join(str(ops[j].ptx_line) for j in near)
            why = (f"ptxas's line table gives PTX line {line} {len(here)} SASS accesses and PTX lines "
                   f"{others} none: which runs which is not known")  # fmt: skip
            for j in (i, *near):
                unsure[j] = why
    return unsure


def _merge(
    i: int, op: Op, name: str, wide: int, ops: dict[int, Op], classes: dict, empty: set
) -> Fate | None:
    """The window of ``wide`` bits of one base, holding ``op`` (the carrier) and instructions of
    the same kind and width whose lines have no SASS: the one such window, or ``None``."""
    here = _address(op)
    width = _bits(name) // 8
    if here is None or not width or wide % (8 * width):
        return None
    base, off = here
    by_offset: dict[int, list[int]] = defaultdict(list)
    for j in empty:
        a = _address(ops[j])
        if a is not None and a[0] == base and classes[j][1] == name:
            by_offset[a[1]].append(j)
    n = wide // (8 * width)
    found = []
    for k in range(n):  # the carrier is the k-th piece of the window
        start = off - k * width
        members = []
        for p in range(n):
            if p == k:
                continue
            at = by_offset.get(start + p * width, [])
            if len(at) != 1:
                break
            members.append(at[0])
        else:
            found.append((start, members))
    if len(found) != 1:
        return None
    start, members = found[0]
    return Fate(i, "merged", (), "", (i, *members), wide // 8, start - off)


def _by_line(
    sass: list[SassOp], lines: dict, kernel_lines: set, kernel: str, engine_lines: frozenset = frozenset()
) -> tuple[dict, list[str]]:
    """The SASS shared instructions by the PTX line of a shared instruction, and the reasons of
    those with none there (or with an opcode bankproof does not know); another engine's SASS
    (SYNCS, UTMALDG, HGMMA) at ``engine_lines`` (those of PTX mbarrier, TMA, wgmma instructions)."""
    at: dict[int, list[SassOp]] = defaultdict(list)
    orphans = []
    for s in sass:
        kind = sass_kind(s.opcode)
        if not sass_known(s.opcode) and not s.never_runs and s.function == kernel:
            where = f"PTX line {s.line}" if s.line else f"{kernel}+{s.pc:#x}"
            orphans.append(
                f"{where}: the SASS runs {s.opcode}, whose effect on shared memory bankproof does not know"
            )
            continue
        if s.never_runs:
            continue
        if kind is None:
            if s.line in engine_lines and s.opcode.split(".", 1)[0] in SASS_ENGINES:
                at[s.line].append(s)
            continue
        if s.line in lines:
            at[s.line].append(s)
        elif (s.line in kernel_lines or (s.line == 0 and s.function == kernel)) and kind[0] != "generic":
            where = f"PTX line {s.line}" if s.line else f"{kernel}+{s.pc:#x} (no PTX line)"
            orphans.append(
                f"{where}: the SASS runs {s.opcode}, which no PTX shared instruction there explains"
            )
    return at, orphans


def reconcile(
    body: list[Op] | tuple[Op, ...],
    classes: dict[int, tuple[str, str]],
    sass: list[SassOp],
    kernel: str,
    tools: str = "",
) -> Reconciliation:
    """The fates of the shared instructions ``classes`` (index -> (family, name)) of ``body``
    against ``sass`` (the module's SASS; ``kernel`` names the kernel's own section)."""
    ops = {op.index: op for op in body}
    lines: dict[int, list[int]] = defaultdict(list)
    for i in classes:
        lines[ops[i].ptx_line].append(i)
    kernel_lines = {op.ptx_line for op in body}
    engine_lines = frozenset(
        ln for ln, idx in lines.items() if all(classes[i][0] not in ("lsu", "ldgsts", "atom32") for i in idx)
    )
    at, orphans = _by_line(sass, lines, kernel_lines, kernel, engine_lines)
    fates: dict[int, Fate] = {}
    blocks = _blocks(body)
    unsure = _reattribute(at, ops, classes, lines, blocks)
    empty = {i for i in classes if not at.get(ops[i].ptx_line)}
    pending: list = []  # wider SASS than the PTX: merges, resolved from the lowest offset of each base
    for i, (fam, name) in classes.items():
        line = ops[i].ptx_line
        here = at.get(line, [])
        codes = tuple(dict.fromkeys(s.opcode for s in here))
        kinds = {sass_kind(s.opcode) for s in here}
        if i in unsure:
            fates[i] = Fate(i, "split", codes, unsure[i])
        elif len(lines[line]) > 1 and here:
            fates[i] = Fate(i, "split", codes, f"PTX line {line} holds several shared instructions: "
                            "which SASS is whose is not known")  # fmt: skip
        elif not here:
            fates[i] = Fate(i, "deleted", codes, "no SASS instruction runs it (ptxas removed it)")
        elif fam == "atom32" and name == "atom.add.u32" and codes == (atomic_rule.INC_SASS,):
            fates[i] = Fate(i, "increment", codes, "")  # a constant increment: its own measured form
        elif fam == "atom32" and codes == (atomic_rule.PTX_FORMS[name.split(".", 1)[1]],):
            fates[i] = Fate(i, "kept", codes, "")  # the measured ATOMS form, one per PTX atomic
        elif fam not in ("lsu", "ldgsts"):  # an atomic, a tensor map's edit: run as other instructions
            fates[i] = Fate(i, "rewritten", codes, f"the SASS runs {', '.join(codes)}")
        elif all(_same((fam, name), k) for k in kinds):
            fates[i] = Fate(i, "kept", codes, "")
        elif fam == "lsu" and len(kinds) == 1 and _bits(name) and _bits(next(iter(kinds))[1]) > _bits(name) \
                and next(iter(kinds))[1][:2] == name[:2]:  # fmt: skip
            pending.append((_address(ops[i]) or ("", 0), i, name, _bits(next(iter(kinds))[1]), codes))
        elif (
            any(k[1][:2] == name[:2] for k in kinds)
            or fam == "ldgsts"
            and any(k[0] == "ldgsts" for k in kinds)
        ):
            fates[i] = Fate(i, "split", codes, f"the SASS runs {', '.join(codes)} for it: not modelled")
        else:
            fates[i] = Fate(i, "disagree", codes, f"the PTX's {name} runs as {', '.join(codes)} in the SASS, "
                            "which bankproof cannot explain")  # fmt: skip
    for _, i, name, wide, codes in sorted(pending):
        m = _merge(i, ops[i], name, wide, ops, classes, empty)
        if m is None and name.startswith("ld") and len(codes) == 1:
            # a lone load run wider: the one aligned window of that size holding each lane's word
            why = f"one {codes[0]}: the aligned {wide // 8}-byte window holding the address"
            fates[i] = Fate(i, "merged", codes, why, (i,), wide // 8, None)
        elif m is None:
            why = f"the SASS runs {codes[0]} here and no neighbour of one base explains it: not modelled"
            fates[i] = Fate(i, "split", codes, why)
        else:
            empty -= set(m.members)  # each PTX access merged once
            fates[i] = Fate(i, "merged", codes, f"one {codes[0]}", m.members, m.size, m.delta)
    for f in list(fates.values()):
        if f.kind == "merged":
            for j in f.members[1:]:
                if fates.get(j) is None or fates[j].kind == "deleted":
                    why = f"merged into the SASS of PTX line {ops[f.members[0]].ptx_line}"
                    fates[j] = Fate(j, "merged", (), why, f.members, f.size, f.delta)
    return Reconciliation(tools, fates, tuple(orphans))


LOOPED = "SASS loop"  # a report's status: ptxas runs it as a retry loop (its LDS and ATOMS counts are timing)


AS_LOADS = "SASS loads and stores"  # a report's status: ptxas runs it as LDS/STS, counted there by ncu
AS_ATOMICS = "SASS atomics"  # a report's status: ptxas runs it as ATOMS (sm80's mbarrier arrive)
ENGINE = "measured"  # a report's status: the SASS runs it on an engine measured to add no LSU wavefronts
HIDDEN = frozenset({AS_LOADS, AS_ATOMICS})  # statuses whose SASS Nsight Compute counts under a total


def status_of(fate: object) -> str:
    """The status of an instruction the counts do not model: :data:`LOOPED` for a compare-and-swap
    loop, :data:`AS_LOADS` where the SASS runs it as shared loads and stores (a tensor map edited in
    shared memory, sm80's mbarrier init and wait), :data:`AS_ATOMICS` as shared atomics (sm80's
    mbarrier arrive), :data:`ENGINE` where every SASS instruction at it is another engine's (sm90's
    SYNCS for an mbarrier), else ``not modelled``.

    >>> status_of(Fate(0, "rewritten", ("SYNCS.ARRIVE.TRANS64.A1T0",), "")), status_of(None)
    ('measured', 'not modelled')
    """
    if not isinstance(fate, Fate) or fate.kind != "rewritten":
        return "not modelled"
    if any(".CAS" in c for c in fate.sass):
        return LOOPED
    kinds = {(sass_kind(c) or ("", ""))[0] for c in fate.sass}
    if "lsu" in kinds:
        return AS_LOADS
    if "atomic" in kinds:
        return AS_ATOMICS
    if fate.sass and all(c.split(".", 1)[0] in SASS_ENGINES for c in fate.sass):
        return ENGINE
    return "not modelled"


def rewritten(fate: object, passes: int | None = None) -> str | None:
    """Why ptxas's rewrite (an atomic as a loop) is not counted, else ``None`` (bound: ``passes``).

    >>> rewritten(Fate(0, "rewritten", ("LDS", "ATOMS.CAST.SPIN"), ""), 4)[-71:]
    'at least 4 warp passes (each an LDS and an ATOMS.CAST), the rest timing'
    """
    if not isinstance(fate, Fate) or fate.kind != "rewritten":
        return None
    runs = ", ".join(fate.sass)
    if any(".CAS" in c for c in fate.sass):
        bound = f"at least {passes} warp passes" if passes is not None else "at least one pass a warp"
        return (f"ptxas rewrites it as a compare-and-swap loop ({runs}): {bound} (each an LDS and an "
                "ATOMS.CAST), the rest timing")  # fmt: skip
    status = status_of(fate)
    if status == AS_LOADS:
        return (f"the SASS runs {runs} for it: shared loads and stores Nsight Compute counts with the "
                "kernel's, not modelled, so no load or store total is stated")  # fmt: skip
    if status == AS_ATOMICS:
        return (f"the SASS runs {runs} for it: shared atomics Nsight Compute counts with the kernel's, "
                "not modelled, so no atomic total is stated")  # fmt: skip
    if status == ENGINE:
        return (f"the SASS runs {runs} for it: another engine's, no LSU shared wavefronts (measured: "
                "gpu_checks/results/h100-2026-11-27-engines.json.gz)")  # fmt: skip
    return f"the SASS runs {runs} for it: shared atomics have no measured rule yet (not modelled)"
