"""The bank scope of one instruction (seed 001): for each wavefront group, which lanes reach
which word of which bank; :mod:`bankproof.verifier.render.scope` draws it (rows: 128-byte
segments, columns: banks). Also the matrix views (seed 000) of the memory layout and the access.

>>> from bankproof.verifier.api.spec_file import parse_spec
>>> blocked = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
>>> spec = parse_spec({"shape": [32], "dtype": "f32", "memory": {"formula": "i"},
...                    "access": [{"name": "st", "kind": "store", "layout": {"triton": blocked}}]})
>>> r = show(spec)
>>> len(r.groups), r.groups[0][0]
(1, {0: [0]})
"""

from __future__ import annotations

import numpy as np
from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.hardware import BANKS, phase_ids
from bankproof.verifier.engine.matrices import access_matrix, memory_matrix
from bankproof.verifier.engine.spec import Spec
from bankproof.verifier.results import SCHEMA, ExplainResult, PageData, ShowResult


def groups(spec: Spec, access: str | None, instruction: int | None) -> tuple[dict, list[dict]]:
    """The chosen access and, per wavefront group, ``{bank: {word: [lanes]}}``; instruction
    ``None`` picks the first of the costliest (relative to its ideal) instructions."""
    accs = spec.accesses
    if access is not None:
        accs = [a for a in accs if a.name == access]
        if not accs:
            names = ", ".join(a.name for a in spec.accesses)
            raise InputError("show", "access", f"names no access of the spec ({names})", access)
    acc = accs[0]
    t = target.get(spec.arch)
    if "show" not in t.commands:  # the scope draws the phase model's phases
        raise t.refuse("show", "show")
    a = target.build(t.arch, acc.layout, spec.memory, spec.elem_bits, acc.kind, acc.instr)
    c = target.count(t.arch, a)  # one evaluation: it picks the instruction and says if it is known
    if instruction is None:
        instruction = int(np.argmax(c.counts / np.maximum(c.ideals, 1)))
    if not 0 <= instruction < len(a.addresses):
        raise InputError("show", "instruction", f"must be in [0, {len(a.addresses)})", instruction)
    offs = a.addresses[instruction]
    active = offs >= 0
    if (
        not t.counts_from_bases
    ):  # lane groups: a group of lanes per cycle group; words of 4 bytes, the arch's banks
        rule = a.instr
        phases = rule.groups if rule.groups is not None else np.zeros(len(offs), dtype=np.int64)
        nwords, banks_n = rule.width // 4, t.banks

        def words(off: int) -> range:
            return range(off // 4, off // 4 + nwords)
    else:
        phases = phase_ids(a.instr, offs[None, :], active[None, :])[0]
        words, banks_n = a.instr.words, BANKS
    out = []
    for p in sorted(set(phases[active].tolist())):
        banks: dict[int, dict[int, list[int]]] = {}
        for lane in np.flatnonzero(active & (phases == p)).tolist():
            for w in words(int(offs[lane])):
                banks.setdefault(w % banks_n, {}).setdefault(w, []).append(lane)
        out.append(banks)
    info = {"access": acc.name, "kind": acc.kind, "instr": a.instr.short, "instruction": instruction,
            "instructions": len(a.addresses), "spec": spec.path, "banks": banks_n, "model": t.model,
            "unknown": c.reason if c.unknown[instruction] else None}  # fmt: skip
    return info, out


def matrices(spec: Spec, access: str) -> list:
    """The matrix views of the spec's memory layout and of the named access's layout."""
    acc = next(a for a in spec.accesses if a.name == access)
    mem = memory_matrix(spec.memory, spec.dims, spec.elem_bits)
    return [mem, access_matrix(acc.layout, spec.dims, access)]


def show(spec: Spec, access: str | None = None, instruction: int | None = None) -> ShowResult:
    """The bank scope of one instruction of one access (default: the first access, and the first
    of its costliest instructions), with the matrix views."""
    info, phases = groups(spec, access, instruction)
    return ShowResult(
        schema=SCHEMA,
        spec=info["spec"],
        access=info["access"],
        kind=info["kind"],
        instr=info["instr"],
        instruction=info["instruction"],
        instructions=info["instructions"],
        groups=tuple(phases),
        unknown=info["unknown"],
        banks=info["banks"],
        model=info["model"],
        matrices=tuple(matrices(spec, info["access"])),
    )


def page_data(spec: Spec, result) -> PageData:
    """Everything the HTML page of ``result`` (``spec``'s verify result) draws beyond the result."""
    from bankproof.verifier.engine.synthesis import explain

    scopes: dict = {}
    for a in result.accesses:
        i = a.conflict.instruction if a.conflict else 0
        try:
            scopes[a.name] = show(spec, a.name, i)
        except InputError as e:
            scopes[a.name] = str(e)
    try:
        explanation: ExplainResult | str = explain(spec)
        notations = explanation.notations
    except InputError as e:
        explanation, notations = str(e), {}
    return PageData(
        scopes=scopes,
        access_matrices={a.name: access_matrix(a.layout, spec.dims, a.name) for a in spec.accesses},
        memory_matrix=memory_matrix(spec.memory, spec.dims, spec.elem_bits),
        explanation=explanation,
        notations=notations,
    )
