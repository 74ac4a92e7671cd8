"""Synthesis over instruction choices too: the §5.4 construction run for each candidate vector
(the offset bits at the bottom of the memory layout), each access costed exactly with every
instruction it can use there, and the cheapest (layout, instructions) pair kept.

The family searched: vectors made of the writer's and the reader's register bits (the common
ones, either side's own, or the common ones extended by one side's, as Triton pads a 16-bit
vector to a word with a bit that is a register of one side and a lane or warp of the other),
each length up to 128 bits per lane; per access, the widest ``ld``/``st`` vector the layout
allows and, on 16-bit data, ``ldmatrix``/``stmatrix`` ``.x4/.x2/.x1`` and ``.trans`` where the
layout delivers them (``stmatrix`` on sm90 and later). An instruction the spec fixes is the only
one tried for that access.

The universal lower bound: a wavefront serves at most 128 distinct bytes (one 4-byte word per
bank), so an access touching B distinct bytes costs at least ceil(B / 128), whatever the layout
(linear, padded or any other) and whatever the instruction. A pair meeting it is optimal over
everything.

>>> from bankproof.verifier.api.spec_file import load_spec
>>> import pathlib
>>> spec = load_spec(pathlib.Path(__file__).parents[2] / "examples" / "transpose_16x32_plain.toml",
...                  require_memory=False)
>>> best = search(spec)[0]
>>> best.total, best.instructions, universal_bound(spec)
(32, ('st128', 'ld32'), 32)
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.hardware import instruction, ldst_phases, vector_limit
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space
from bankproof.models.swizzle import Construction, optimal_swizzle, packed_bases, vectorization
from bankproof.verifier.engine.costs import (
    access_bound,
    best_cost,
    matrix_options,
    tensor_to_offset,
)
from bankproof.verifier.engine.spec import AccessSpec, Spec


@dataclass(frozen=True)
class Candidate:
    """One (memory layout, instructions) pair and its exact cost."""

    vector: tuple[int, ...]  # packed row-major tensor bits at offset bits 0.. (the construction's V)
    construction: Construction
    instructions: tuple[str, str]  # writer's, reader's (short names: st128, ldsm.x4.trans, ...)
    wavefronts: tuple[int, int]
    issued: tuple[int, int]  # warp instructions

    @property
    def total(self) -> int:
        return sum(self.wavefronts)

    @property
    def key(self) -> tuple[int, int]:
        return (self.total, sum(self.issued))


def pick_pair(spec: Spec) -> tuple[AccessSpec, AccessSpec]:
    """The writer (first store) and reader (first load); one access serves as both if alone."""
    stores = [a for a in spec.accesses if a.kind == "store"]
    loads = [a for a in spec.accesses if a.kind == "load"]
    writer = stores[0] if stores else loads[0]
    reader = loads[0] if loads else stores[0]
    return writer, reader


def universal_bound(spec: Spec) -> int:
    """:func:`access_bound` of the writer plus the reader (bytes / 128 per wavefront; on a
    lane-group target bytes / (banks x 4) per cycle)."""
    t = target.get(spec.arch)
    line = t.row_bytes
    return sum(access_bound(a.layout, spec.elem_bits, line) for a in pick_pair(spec))


def _vectors(a: LinearLayout, b: LinearLayout, space: Space, elem_bits: int) -> list[tuple]:
    """Candidate (vector, writer's phase rows, reader's phase rows, per-side widths), the §5.4
    vector first; each vector again with a side's phases at its own (narrower) width where that
    side's registers hold only a prefix of it (as a 32-bit store into a 16-byte ldmatrix row). The
    16-byte rows of ldmatrix/stmatrix fix the vector: with ``.trans`` a row holds the bits of
    lanes 2-4 and the 8 rows of a phase differ in the pair register's and lanes 0-1's bits; plain,
    the reverse."""
    limit = vector_limit(elem_bits)
    a_reg = [space.pack_row_major(x) for x in a.in_bases("register") if any(x)]
    b_reg = [space.pack_row_major(x) for x in b.in_bases("register") if any(x)]
    common = vectorization(a, b, space, elem_bits)
    families = [common, a_reg, b_reg, common + [x for x in a_reg if x not in common],
                common + [x for x in b_reg if x not in common]]  # fmt: skip
    out: list[tuple] = [(tuple(common), None, None)]
    for fam in families:
        for n in range(min(limit, len(fam)) + 1):
            v = (tuple(fam[:n]), None, None)
            if v not in out:
                out.append(v)
    if elem_bits == 16:
        shapes: list[list[tuple[tuple[int, ...], tuple[int, ...]]]] = [[], []]
        for side, lay, regs in ((0, a, a_reg), (1, b, b_reg)):
            lanes = [space.pack_row_major(x) for x in lay.in_bases("lane")]
            if not all(lanes):
                continue
            shapes[side] = [(tuple(lanes[2:5]), (r, lanes[0], lanes[1])) for r in regs]  # .trans
            shapes[side] += [((r, lanes[0], lanes[1]), tuple(lanes[2:5])) for r in regs]  # plain
            for vec, rows in shapes[side]:
                cand = (vec, rows if side == 0 else None, rows if side == 1 else None)
                if cand not in out:
                    out.append(cand)
        # both sides a matrix instruction: their 16-byte rows must be the same offsets in the same
        # order, and each side's phases are its own 8 rows (stmatrix.x2.trans writing what
        # ldmatrix.x2.trans reads, both at one wavefront a matrix)
        for vec, rows_a in shapes[0]:
            for vec_b, rows_b in shapes[1]:
                if vec_b == vec and (vec, rows_a, rows_b) not in out:
                    out.append((vec, rows_a, rows_b))
    full = [(vec, ra, rb, (None, None)) for vec, ra, rb in out]
    narrow = []
    for vec, ra, rb in out:  # a side holding only a prefix of the vector moves that prefix
        widths = (_prefix(vec, a_reg) if ra is None else None, _prefix(vec, b_reg) if rb is None else None)
        widths = tuple(None if x is None or x >= len(vec) else x for x in widths)
        if widths != (None, None):
            narrow.append((vec, ra, rb, widths))
    return full + narrow


def _prefix(vec: tuple[int, ...], regs) -> int:
    """How many of ``vec``'s first bits are registers of the side (its widest ld/st vector)."""
    k = 0
    while k < len(vec) and vec[k] in regs:
        k += 1
    return k


def _options(a: AccessSpec, elem_bits: int, arch: str) -> list[str]:
    if a.instr != "auto":  # pinned, or CuTe's auto-vectorizing copy (the widest ld/st, never ldmatrix)
        return [a.instr]
    return ["auto", *matrix_options(a.kind, elem_bits, target.get(arch).has("stsm.x4"))]


def _cost(a: AccessSpec, memory: LinearLayout, elem_bits: int, arch: str) -> tuple[int, int, str] | None:
    """The cheapest (wavefronts, instructions, name) of access ``a`` on ``memory``."""
    return best_cost(a.layout, a.kind, memory, elem_bits, _options(a, elem_bits, arch))


def candidates(a: LinearLayout, b: LinearLayout, elem_bits: int, kinds=("store", "load"), dims=None):
    """The candidate constructions (vector, construction) for writer ``a`` and reader ``b``."""
    b = b.transpose_outs(a.out_dim_names)
    for vec, rows_a, rows_b, widths in _vectors(a, b, Space.of(a, dims), elem_bits):
        yield vec, _construct(a, b, elem_bits, kinds, dims, vec, (rows_a, rows_b), widths)


def _construct(a, b, elem_bits, kinds, dims, vec, rows, widths=(None, None)) -> Construction:
    return optimal_swizzle(a, b, elem_bits, kinds[0], kinds[1], dims, vec=list(vec), phase_rows=rows,
                           widths=widths)  # fmt: skip


def clear_caches() -> None:
    """Forget the kept inverses and packed bases, and the models' tables (benchmarks time cold
    calls)."""
    from bankproof.models.access import clear_caches as clear_models

    clear_models()
    target.clear_caches()
    packed_bases.cache_clear()
    tensor_to_offset.cache_clear()


def _floor(a: AccessSpec, elem_bits: int, arch: str, vec: tuple[int, ...], space: Space) -> tuple | None:
    """A lower bound on (wavefronts, instructions) of access ``a`` on any layout whose offset
    bits 0.. hold ``vec``: every option at one wavefront per phase, ld/st no wider than the
    prefix of ``vec`` made of the access's registers allows; None when no option fits."""
    packed = packed_bases(a.layout, space.dims)
    regs, lanes = [x for x in packed["register"] if x], packed["lane"]
    copies = len(a.layout.in_bases("warp")) + len(a.layout.in_bases("block"))
    limit = min(len(regs), vector_limit(elem_bits))
    k = _prefix(vec, regs)
    k = limit if k == len(vec) else min(k, limit)  # past the vector, the layout may still extend it
    totals, instrs = [], []
    for opt in _options(a, elem_bits, arch):
        if opt.startswith(("ldsm", "stsm")):
            if regs:  # a matrix is 8 rows of 16 bytes; each lane holds 4 of its bytes
                matrices = max(1, (1 << (len(regs) + copies)) * elem_bits // 32)
                totals.append(matrices)
                instrs.append(max(1, matrices // 4))
            continue
        if opt == "auto":
            widths = range(k + 1)
        else:
            ins = instruction(opt)
            need = (ins.width * 8 // elem_bits).bit_length() - 1
            widths = [need] if ins.width * 8 % elem_bits == 0 and need <= k else []
        for v in widths:
            phases = ldst_phases((1 << v) * elem_bits // 8, a.kind, lanes)
            n = 1 << (copies + len(regs) - v)
            totals.append(phases * n)
            instrs.append(n)
    return (min(totals), min(instrs)) if totals else None


def search(spec: Spec, exhaustive: bool = False) -> list[Candidate]:
    """The cheapest candidates that can carry the spec's accesses, cheapest first (fewest
    wavefronts, then fewest instructions; on a tie the §5.4 vector, then the order tried).
    Candidates whose lower bound cannot beat the best so far are skipped unless ``exhaustive``
    (which costs every candidate, for runners-up); the first is the same either way."""
    writer, reader = pick_pair(spec)
    found: list[Candidate] = []
    kinds = (writer.kind, reader.kind)
    a, b = writer.layout, reader.layout.transpose_outs(writer.layout.out_dim_names)
    space = Space.of(a, spec.dims)
    best: tuple[int, int] | None = None
    for vec, rows_a, rows_b, widths in _vectors(a, b, space, spec.elem_bits):
        if not exhaustive and best is not None:
            fw = _floor(writer, spec.elem_bits, spec.arch, vec, space)
            fr = _floor(reader, spec.elem_bits, spec.arch, vec, space)
            if fw is None or fr is None or (fw[0] + fr[0], fw[1] + fr[1]) >= best:
                continue
        s = _construct(a, b, spec.elem_bits, kinds, spec.dims, vec, (rows_a, rows_b), widths)
        w = _cost(writer, s.layout, spec.elem_bits, spec.arch)
        r = _cost(reader, s.layout, spec.elem_bits, spec.arch)
        if w is None or r is None:
            continue
        found.append(Candidate(vec, s, (w[2], r[2]), (w[0], r[0]), (w[1], r[1])))
        best = min(best or found[-1].key, found[-1].key)
    if not found:
        raise InputError("synth", "access", "no candidate layout can carry the instructions the spec fixes")
    return [found[i] for i in sorted(range(len(found)), key=lambda i: (found[i].key, i))]
