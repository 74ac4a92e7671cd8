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

>>> from bankproof.verifier.engine.spec import load_spec
>>> import pathlib
>>> spec = load_spec(pathlib.Path(__file__).parents[2] / "examples" / "transpose_16x32_plain.toml",
...                  require_memory=False)
>>> best = search(spec)[0]
>>> best.total, best.instructions, universal_bound(spec)
(32, ('st128', 'ld32'), 32)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from bankproof.models import f2
from bankproof.models.access import build_access
from bankproof.models.errors import InputError
from bankproof.models.hardware import bank_field, evaluate, instruction, ldst_phases, vector_limit
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space
from bankproof.models.swizzle import Construction, optimal_swizzle, packed_bases, vectorization
from bankproof.verifier.engine.spec import AccessSpec, Spec

MATRIX_LOADS = ("ldsm.x4", "ldsm.x4.trans", "ldsm.x2", "ldsm.x2.trans", "ldsm.x1", "ldsm.x1.trans")
MATRIX_STORES = ("stsm.x4", "stsm.x4.trans", "stsm.x2", "stsm.x2.trans", "stsm.x1", "stsm.x1.trans")
STMATRIX_ARCHS = ("sm90", "sm100")


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
    """:func:`access_bound` of the writer plus the reader."""
    return sum(access_bound(a.layout, spec.elem_bits) for a in pick_pair(spec))


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
        for side, lay, regs in ((0, a, a_reg), (1, b, b_reg)):
            lanes = [space.pack_row_major(x) for x in lay.in_bases("lane")]
            if not all(lanes):
                continue
            shapes = [(lanes[2:5], [r, lanes[0], lanes[1]]) for r in regs]  # .trans
            shapes += [([r, lanes[0], lanes[1]], lanes[2:5]) for r in regs]  # plain
            for vec, rows in shapes:
                cand = (tuple(vec), tuple(rows) if side == 0 else None, tuple(rows) if side == 1 else None)
                if cand not in out:
                    out.append(cand)
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


def matrix_options(kind: str, elem_bits: int, stmatrix: bool) -> list[str]:
    """The ldmatrix/stmatrix forms an access of ``kind`` may try (16-bit data; ``stmatrix``
    where the target has it)."""
    if elem_bits != 16:
        return []
    if kind == "load":
        return list(MATRIX_LOADS)
    return list(MATRIX_STORES) if stmatrix else []


def vector_instr(kind: str, bits: int) -> str:
    """The ld/st instruction moving ``bits`` per lane (short name: ``st64``, ``ld128``, ...)."""
    return instruction(f"{'st' if kind == 'store' else 'ld'}{bits}").short


def _options(a: AccessSpec, elem_bits: int, arch: str) -> list[str]:
    if a.instr != "auto":
        return [a.instr]
    return ["auto", *matrix_options(a.kind, elem_bits, arch in STMATRIX_ARCHS)]


def _cost(a: AccessSpec, memory: LinearLayout, elem_bits: int, arch: str) -> tuple[int, int, str] | None:
    """The cheapest (wavefronts, instructions, name) of access ``a`` on ``memory``."""
    return best_cost(a.layout, a.kind, memory, elem_bits, _options(a, elem_bits, arch))


def _basis_offsets(layout: LinearLayout, memory: LinearLayout) -> dict[str, list[int]] | None:
    """Each register, lane and warp basis of ``layout`` as an element offset of ``memory``
    (broadcast bases: 0); None when ``memory`` is not invertible."""
    inverse = _tensor_to_offset(memory)
    if inverse is None:
        return None
    packed = packed_bases(layout, memory.out_dims)
    return {d: [f2.apply(inverse, x) for x in packed[d]] for d in ("register", "lane", "warp")}


@functools.lru_cache(maxsize=64)
def _tensor_to_offset(memory: LinearLayout) -> tuple[int, ...] | None:
    """The memory layout's inverse as columns: tensor bit i (row-major) -> its element offset;
    None when the memory layout is not invertible."""
    space = Space.of(memory)
    cols = [space.pack_row_major(x) for x in memory.in_bases("offset")]
    if len(cols) != space.bits or f2.rank(cols) != space.bits:
        return None
    return tuple(f2.preimages(cols, space.bits))


def _width(offs: dict[str, list[int]], elem_bits: int) -> int:
    """log2 of the widest ld/st vector (elements): offset bits 0..v-1 are each one of the
    access's registers and every other basis leaves those bits alone, at most 16 bytes."""
    regs = [o for o in offs["register"] if o]
    others = [o for o in offs["lane"] + offs["warp"] if o]
    limit = vector_limit(elem_bits)
    v = 0
    while v < limit and (1 << v) in regs:
        low = (1 << (v + 1)) - 1
        vector = {1 << k for k in range(v + 1)}
        if any(o & low for o in others) or any(o & low for o in regs if o not in vector):
            break
        v += 1
    return v


def vector_width(layout: LinearLayout, memory: LinearLayout, elem_bits: int) -> int:
    """log2 of the widest ld/st vector (elements) ``layout`` can move on an invertible linear
    ``memory`` (each chunk aligned and in register order after Triton's permutation).

    >>> mem = LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"dim0": 32})
    >>> lay = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4], [8], [16], [0], [0]]},
    ...                               {"dim0": 32})
    >>> vector_width(lay, mem, 32)
    2
    """
    offs = _basis_offsets(layout, memory)
    if offs is None:
        raise InputError("access", "memory", "must be an invertible linear layout")
    return _width(offs, elem_bits)


def _ldst_cost(offs: dict[str, list[int]], copies: int, kind: str, elem_bits: int, opt: str) -> tuple | None:
    """An ld/st option's (wavefronts, instructions, name) from the bases' element offsets
    (Lemma 9.4 in offset coordinates); None when the layout cannot carry it.

    Per phase, lanes whose offsets differ by x share a bank when x has no bits in the bank field
    (element bits ``lo .. hi-1``: above the word, below 128 bytes) and a word when x has no bits
    from ``lo`` up; the phase costs (lanes sharing a bank) / (lanes sharing a word).
    """
    v = _width(offs, elem_bits)
    if opt != "auto":
        want = instruction(opt)
        if want.is_matrix or want.is_load != (kind == "load") or want.width * 8 % elem_bits:
            return None
        need = (want.width * 8 // elem_bits).bit_length() - 1
        if need > v:
            return None
        v = need
    lanes = offs["lane"]
    phases = ldst_phases((1 << v) * elem_bits // 8, kind, lanes)
    keep = len(lanes) - (phases.bit_length() - 1)
    lo, hi = bank_field(v, elem_bits)
    field = ((1 << hi) - 1) ^ ((1 << lo) - 1)
    span = f2.span([x for x in lanes[:keep] if x])
    wave = sum(1 for x in span if not x & field) // sum(1 for x in span if not x >> lo)
    regs = sum(1 for o in offs["register"] if o)
    instructions = 1 << (copies + regs - v)
    return phases * wave * instructions, instructions, vector_instr(kind, (1 << v) * elem_bits)


def _matrix_cost(offs: dict[str, list[int]], copies: int, kind: str, opt: str) -> tuple | None:
    """A 16-bit ldmatrix/stmatrix option's (wavefronts, instructions, name) on a linear memory
    layout, without enumerating; None when the layout cannot carry it.

    Each 8x8 matrix is one phase of 8 16-byte rows. Plain: register 0 and lanes 0-1 walk a
    row (element offsets 1, 2, 4), lanes 2-4 pick the row; ``.trans``: lanes 2-4 walk it,
    register 0 and lanes 0-1 pick the row (:func:`bankproof.models.access.build_access`'s
    fragments). Every other basis must keep rows 16-byte aligned. The rows of every phase are a
    coset of one span, so each phase costs the most rows sharing one 4-bank group: the rows
    whose offsets have bits 3-5 zero.
    """
    ins = instruction(opt)
    if not ins.is_matrix or ins.is_load != (kind == "load"):
        return None
    lanes, warps = offs["lane"], offs["warp"]
    regs = _access_order([o for o in offs["register"] if o])
    if len(lanes) != 5 or not regs or (1 << len(regs)) % (2 * ins.matrices):
        return None
    walk, rows = (lanes[2:5], [regs[0], *lanes[0:2]]) if ins.trans else ([regs[0], *lanes[0:2]], lanes[2:5])
    if walk != [1, 2, 4] or any(o & 7 for o in rows + regs[1:] + warps):
        return None
    wave = sum(1 for x in f2.span(rows) if (x >> 3) & 7 == 0)
    matrices = 1 << (len(regs) - 1 + copies)
    return wave * matrices, matrices // ins.matrices, ins.short


def _access_order(regs: list[int]) -> list[int]:
    """Register offsets in the order the access walks them: those at 1, 2, 4, ... first (as
    :func:`bankproof.models.access.access_layout` reorders), the rest as they come."""
    rest, first = list(regs), []
    while (1 << len(first)) in rest:
        first.append(rest.pop(rest.index(1 << len(first))))
    return first + rest


def best_cost(layout: LinearLayout, kind: str, memory, elem_bits: int, options) -> tuple | None:
    """The cheapest (wavefronts, instructions, name) among ``options`` the pair can deliver:
    closed forms on an invertible linear memory layout, enumeration otherwise."""
    offs = _basis_offsets(layout, memory) if isinstance(memory, LinearLayout) else None
    copies = len(layout.in_bases("warp")) + len(layout.in_bases("block"))
    best = None
    for opt in options:
        matrix = opt.startswith(("ldsm", "stsm"))
        if offs is not None and not (matrix and elem_bits != 16):
            if matrix:
                cand = _matrix_cost(offs, copies, kind, opt)
            else:
                cand = _ldst_cost(offs, copies, kind, elem_bits, opt)
        else:
            try:
                acc = build_access(layout, memory, elem_bits, kind, opt)
            except (InputError, ValueError):
                continue
            counts, _, _ = evaluate(acc.instr, acc.addresses)
            cand = (int(counts.sum()), int(acc.addresses.shape[0]), acc.instr.short)
        if cand is not None and (best is None or cand[:2] < best[:2]):
            best = cand
    return best


def enumerated_cost(accesses, memory, elem_bits: int) -> int:
    """Total wavefronts of ``accesses`` ((distributed layout, kind, instruction) each) on
    ``memory``, every instruction of every warp through the hardware model (no closed form): the
    check on a layout found another way.

    >>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]]}, {"d": 32})
    >>> mem = LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"d": 32})
    >>> enumerated_cost([(lay, "store", "st32"), (lay, "load", "ld32")], mem, 32)
    2
    """
    total = 0
    for layout, kind, ins in accesses:
        acc = build_access(layout, memory, elem_bits, kind, ins)
        total += int(evaluate(acc.instr, acc.addresses)[0].sum())
    return total


def access_bound(layout: LinearLayout, elem_bits: int) -> int:
    """Per warp, the distinct bytes it touches / 128 per wavefront (rounded up), summed: a
    wavefront serves one warp's instruction and at most one word per bank. Layouts that give the
    same data to several warps (an mma operand) pay for it in every warp."""
    # one warp's data is the span of its register and lane bases (a subspace: 2^rank elements)
    own = LinearLayout((("register", layout.in_bases("register")), ("lane", layout.in_bases("lane"))),
                       layout.out_dims)  # fmt: skip
    warps = 1 << (len(layout.in_bases("warp")) + len(layout.in_bases("block")))
    return warps * -(-(1 << own.rank) * elem_bits // 8 // 128)


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
    packed_bases.cache_clear()
    _tensor_to_offset.cache_clear()


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
