"""What one access costs on a linear memory layout, in closed form (Lemma 9.4 in element-offset
coordinates; ``ldmatrix``/``stmatrix`` rows per 4-bank group), the cheapest instruction among
those it may use, and the bytes/128 bound no layout or instruction goes below.

>>> lay = LinearLayout.from_bases({"lane": [[1], [2], [4], [8], [16]]}, {"d": 32})
>>> mem = LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"d": 32})
>>> best_cost(lay, "load", mem, 32, ["auto"]), access_bound(lay, 32)
((1, 1, 'ld32'), 1)
"""

from __future__ import annotations

import functools

from bankproof.models import f2
from bankproof.models.access import build_access, vector_cap
from bankproof.models.errors import InputError
from bankproof.models.hardware import bank_field, evaluate, instruction, ldst_phases, vector_limit
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space
from bankproof.models.swizzle import packed_bases

MATRIX_LOADS = ("ldsm.x4", "ldsm.x4.trans", "ldsm.x2", "ldsm.x2.trans", "ldsm.x1", "ldsm.x1.trans")
MATRIX_STORES = ("stsm.x4", "stsm.x4.trans", "stsm.x2", "stsm.x2.trans", "stsm.x1", "stsm.x1.trans")


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


def _basis_offsets(layout: LinearLayout, memory: LinearLayout) -> dict[str, list[int]] | None:
    """Each register, lane and warp basis of ``layout`` as an element offset of ``memory``
    (broadcast bases: 0); None when ``memory`` is not invertible."""
    inverse = tensor_to_offset(memory)
    if inverse is None:
        return None
    packed = packed_bases(layout, memory.out_dims)
    return {d: [f2.apply(inverse, x) for x in packed[d]] for d in ("register", "lane", "warp")}


@functools.lru_cache(maxsize=64)
def tensor_to_offset(memory: LinearLayout) -> tuple[int, ...] | None:
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
    if opt.startswith("vector"):  # CuTe's auto-vectorizing copy: the widest, up to its cap
        v = min(v, max(0, (vector_cap(opt) * 8 // elem_bits).bit_length() - 1))
    elif opt != "auto":
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


def access_bound(layout: LinearLayout, elem_bits: int, line_bytes: int = 128) -> int:
    """Per warp, the distinct bytes it touches / 128 per wavefront (rounded up), summed: a
    wavefront serves one warp's instruction and at most one word per bank. Layouts that give the
    same data to several warps (an mma operand) pay for it in every warp. On a lane-group target
    a cycle serves one word per bank of one lane group: ``line_bytes`` = banks x 4."""
    # one warp's data is the span of its register and lane bases (a subspace: 2^rank elements)
    own = LinearLayout((("register", layout.in_bases("register")), ("lane", layout.in_bases("lane"))),
                       layout.out_dims)  # fmt: skip
    warps = 1 << (len(layout.in_bases("warp")) + len(layout.in_bases("block")))
    return warps * -(-(1 << own.rank) * elem_bits // 8 // line_bytes)
