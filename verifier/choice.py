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

>>> from bankproof.verifier.spec import load_spec
>>> import pathlib
>>> spec = load_spec(pathlib.Path(__file__).parents[1] / "examples" / "transpose_16x32_plain.toml",
...                  require_memory=False)
>>> best = search(spec)[0]
>>> best.total, best.instructions, universal_bound(spec)
(32, ('st32', 'ld32'), 32)
"""

from __future__ import annotations

from dataclasses import dataclass

from bankproof.models import f2
from bankproof.models.access import build_access
from bankproof.models.errors import InputError
from bankproof.models.hardware import evaluate, instruction
from bankproof.models.layout import LinearLayout
from bankproof.models.swizzle import Construction, Space, lemma_9_4, optimal_swizzle, vectorization
from bankproof.verifier.spec import AccessSpec, Spec

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
    """Candidate (vector, writer's phase rows, reader's phase rows), the §5.4 vector first. The
    16-byte rows of ldmatrix/stmatrix fix the vector: with ``.trans`` a row holds the bits of
    lanes 2-4 and the 8 rows of a phase differ in the pair register's and lanes 0-1's bits; plain,
    the reverse."""
    limit = max(0, (128 // elem_bits).bit_length() - 1)
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
    return out


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


def _basis_offsets(layout: LinearLayout, memory: LinearLayout) -> dict[str, list[int]]:
    """Each register, lane and warp basis of ``layout`` as an element offset of ``memory``
    (broadcast bases: 0)."""
    space = Space.of(memory)
    cols = [space.pack_row_major(x) for x in memory.in_bases("offset")]
    dist = layout.transpose_outs(memory.out_dim_names)
    return {d: [f2.solve(cols, space.pack_row_major(b)) if any(b) else 0 for b in dist.in_bases(d)]
            for d in ("register", "lane", "warp")}  # fmt: skip


def vector_width(layout: LinearLayout, memory: LinearLayout, elem_bits: int) -> int:
    """log2 of the widest ld/st vector (elements) ``layout`` can move on ``memory``: offset bits
    0..v-1 are each one of its (non-broadcast) registers and every other basis leaves those bits
    alone (each chunk aligned and in register order after Triton's permutation), at most 16 bytes.

    >>> mem = LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"dim0": 32})
    >>> lay = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4], [8], [16], [0], [0]]},
    ...                               {"dim0": 32})
    >>> vector_width(lay, mem, 32)
    2
    """
    offs = _basis_offsets(layout, memory)
    regs = [o for o in offs["register"] if o]
    others = [o for o in offs["lane"] + offs["warp"] if o]
    limit = max(0, (128 // elem_bits).bit_length() - 1)
    v = 0
    while v < limit and (1 << v) in regs:
        low = (1 << (v + 1)) - 1
        vector = {1 << k for k in range(v + 1)}
        if any(o & low for o in others) or any(o & low for o in regs if o not in vector):
            break
        v += 1
    return v


def _lemma_cost(layout: LinearLayout, kind: str, memory: LinearLayout, elem_bits: int, opt: str):
    """An ld/st option's (wavefronts, instructions, name) by Lemma 9.4, without enumerating; None
    when the layout cannot carry it, False when the lemma does not apply (enumerate instead)."""
    v = vector_width(layout, memory, elem_bits)
    if opt != "auto":
        want = instruction(opt)
        if want.is_matrix or want.is_load != (kind == "load") or want.width * 8 % elem_bits:
            return False
        need = (want.width * 8 // elem_bits).bit_length() - 1
        if need > v:
            return None
        v = need
    lem = lemma_9_4(memory, layout, elem_bits, kind, v)
    if not lem.applies or lem.wavefronts_per_instruction is None:
        return False
    regs = sum(1 for b in layout.in_bases("register") if any(b))
    copies = len(layout.in_bases("warp")) + len(layout.in_bases("block"))
    instructions = 1 << (copies + regs - v)
    name = vector_instr(kind, (1 << v) * elem_bits)
    return lem.wavefronts_per_instruction * instructions, instructions, name


def _rows_fit(layout: LinearLayout, memory: LinearLayout, form: str) -> bool:
    """A necessary condition for 16-bit ldmatrix/stmatrix: the 8 elements of a 16-byte row sit at
    element offsets 1, 2, 4 from lanes 2-4 (``.trans``) or from a register and lanes 0-1 (plain)."""
    offs = _basis_offsets(layout, memory)
    if form == "trans":
        return offs["lane"][2:5] == [1, 2, 4]
    return 1 in offs["register"] and offs["lane"][0:2] == [2, 4]


def best_cost(layout: LinearLayout, kind: str, memory, elem_bits: int, options) -> tuple | None:
    """The cheapest (wavefronts, instructions, name) among ``options`` the pair can deliver."""
    best = None
    linear = isinstance(memory, LinearLayout)
    delivered: set[str] = set()  # matrix forms ("plain", "trans") an .xN already delivers
    for opt in options:
        matrix = opt.startswith(("ldsm", "stsm"))
        if linear and not matrix:
            cand = _lemma_cost(layout, kind, memory, elem_bits, opt)
            if cand is not False:  # Lemma 9.4 counts it (None: the layout cannot carry it)
                if cand is not None and (best is None or cand[:2] < best[:2]):
                    best = cand
                continue
        form = "trans" if opt.endswith(".trans") else "plain"
        if matrix and form in delivered:
            continue  # fewer matrices per instruction: the same phases, more instructions
        if matrix and linear and elem_bits == 16 and not _rows_fit(layout, memory, form):
            continue
        try:
            acc = build_access(layout, memory, elem_bits, kind, opt)
        except (InputError, ValueError):
            continue
        if matrix:
            delivered.add(form)
        counts, _, _ = evaluate(acc.instr, acc.addresses)
        cand = (int(counts.sum()), int(acc.addresses.shape[0]), acc.instr.short)
        if best is None or cand[:2] < best[:2]:
            best = cand
    return best


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
    """The candidate constructions (vector, rows) for writer ``a`` and reader ``b``."""
    b = b.transpose_outs(a.out_dim_names)
    space = Space.of(a, dims)
    for vec, rows_a, rows_b in _vectors(a, b, space, elem_bits):
        yield vec, optimal_swizzle(a, b, elem_bits, kinds[0], kinds[1], dims, vec=list(vec),
                                   phase_rows=(rows_a, rows_b))  # fmt: skip


def search(spec: Spec) -> list[Candidate]:
    """Every candidate that can carry the spec's accesses, cheapest first (fewest wavefronts,
    then fewest instructions; on a tie the §5.4 vector, then the order tried)."""
    writer, reader = pick_pair(spec)
    found: list[Candidate] = []
    kinds = (writer.kind, reader.kind)
    for vec, s in candidates(writer.layout, reader.layout, spec.elem_bits, kinds, spec.dims):
        w = _cost(writer, s.layout, spec.elem_bits, spec.arch)
        r = _cost(reader, s.layout, spec.elem_bits, spec.arch)
        if w is None or r is None:
            continue
        found.append(Candidate(vec, s, (w[2], r[2]), (w[0], r[0]), (w[1], r[1])))
    if not found:
        raise InputError("synth", "access", "no candidate layout can carry the instructions the spec fixes")
    return [found[i] for i in sorted(range(len(found)), key=lambda i: (found[i].key, i))]
