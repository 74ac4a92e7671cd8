"""Optimality over every invertible linear memory layout AND every instruction choice (Z3).

The unknown is the matrix M: tensor bits -> element-offset bits (columns ``m_i = M e_i``,
invertible). An instruction choice for an access is a finite option: an ``ld``/``st`` vector of
2^v elements (offset bits 0..v-1 are some v of the access's registers, every other basis of the
access leaves them alone), or an ``ldmatrix``/``stmatrix`` form (the three vectors walking a
16-byte row at element offsets 1, 2, 4, every other basis 16-byte aligned). An option fixes the
in-phase span (the lanes one phase holds, or the 8 rows of a matrix), the bank field of the
element offset (bits ``lo .. hi-1``) and the phases the access issues; each phase costs
``(1 + #span vectors in one bank) / (1 + #span vectors in one word)`` wavefronts, the same count
:mod:`bankproof.verifier.engine.choice` makes in closed form.

``prove_cheapest`` asks, for every pair of options whose phases alone stay below a cost, whether
some M is cheaper (one query per pair, all UNSAT: proved). A model is a cheaper (layout,
instructions) pair, returned so a caller can check it by enumeration.

>>> from bankproof.models.layout import LinearLayout
>>> lanes = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]
>>> a = LinearLayout.from_bases({"register": [[1, 0]], "lane": lanes, "warp": []}, {"dim0": 2, "dim1": 32})
>>> out = prove_cheapest(a, a, 32, ("store", "load"), 4, "sm90")
>>> out.status, out.queries
('proved', 0)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3
from bankproof.models import f2, target
from bankproof.models.hardware import bank_field, instruction, ldst_phases, vector_limit
from bankproof.models.layout import LinearLayout
from bankproof.models.space import Space
from bankproof.models.swizzle import packed_bases
from bankproof.proofs.encode import configure

MAX_BITS = 30  # tensor bits M may have (the bases limit; Z3 answers unknown on its timeout)


@dataclass(frozen=True)
class Option:
    """One instruction choice for one access, as constraints on M and its phase structure."""

    name: str  # st128, ld32, ldsm.x4.trans, ...
    pinned: tuple[tuple[int, int], ...]  # (tensor vector, element offset) M maps exactly
    units: tuple[int, ...]  # offsets each the image of one of ``pick`` (an ld/st vector, ...)
    pick: tuple[int, ...]  # ... whose members not mapped to a unit keep the alignment
    aligned: tuple[int, ...]  # bases whose offsets have bits 0..low-1 zero
    low: int
    span: tuple[int, ...]  # in-phase lanes / rows (tensor vectors)
    lo: int
    hi: int
    phases: int  # phases the whole access issues


@dataclass(frozen=True)
class Cheapest:
    """``proved``: no pair of options and layout costs less than ``cost``; ``refuted``: one
    does (``layout``, ``instructions``, ``modeled`` its cost by the encoding); ``unknown``."""

    status: str
    seconds: float
    queries: int
    reason: str = ""
    layout: LinearLayout | None = None
    instructions: tuple[str, str] | None = None
    modeled: int | None = None


def options(
    layout: LinearLayout, kind: str, elem_bits: int, space: Space, choices: list[str]
) -> list[Option]:
    """The options ``choices`` name (``auto``: every ld/st width) as constraints.

    >>> lay = LinearLayout.from_bases({"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}, {"d": 64})
    >>> [o.name for o in options(lay, "load", 32, Space.of(lay), ["auto"])]
    ['ld32', 'ld64']
    """
    p = packed_bases(layout, space.dims)
    regs = [x for x in p["register"] if x]
    lanes, warps = p["lane"], [x for x in p["warp"] if x]
    copies = len(layout.in_bases("warp")) + len(layout.in_bases("block"))
    limit = min(len(regs), vector_limit(elem_bits))
    op = "ld" if kind == "load" else "st"
    out: list[Option] = []
    for choice in choices:
        if choice.startswith(("ldsm", "stsm")):
            out += _matrix(choice, kind, elem_bits, regs, lanes, warps, copies)
            continue
        if choice == "auto":
            widths = list(range(limit + 1))
        else:  # a pinned ld/st, or a cp.async copy (its shared side is a store of its width)
            ins = instruction(choice)
            bits = ins.width * 8
            if ins.is_matrix or ins.op != op or bits % elem_bits or bits < elem_bits:
                continue
            need = (bits // elem_bits).bit_length() - 1
            widths = [need] if need <= limit else []
        for v in widths:
            phases = ldst_phases((1 << v) * elem_bits // 8, kind, lanes)
            lo, hi = bank_field(v, elem_bits)
            keep = len(lanes) - (phases.bit_length() - 1)
            n = 1 << (copies + len(regs) - v)
            out.append(Option(
                name=f"{op}{(1 << v) * elem_bits}", pinned=(), units=tuple(1 << k for k in range(v)),
                pick=tuple(regs) if v else (), aligned=tuple(x for x in lanes if x) + tuple(warps), low=v,
                span=tuple(x for x in lanes[:keep] if x), lo=lo, hi=hi, phases=phases * n,
            ))  # fmt: skip
    return out


def _matrix(choice, kind, elem_bits, regs, lanes, warps, copies) -> list[Option]:
    """ldmatrix/stmatrix (16-bit): the widest ``.xN`` the registers allow (fewest instructions,
    the same phases)."""
    is_load = choice.startswith("ldsm")
    if elem_bits != 16 or is_load != (kind == "load") or not regs or any(x == 0 for x in lanes):
        return []
    trans = choice.endswith(".trans")
    m = 4
    while m > 1 and (1 << len(regs)) % (2 * m):
        m //= 2
    if choice.split(".")[1] != "x4":  # a fixed .xN
        m = int(choice.split(".")[1][1:])
        if (1 << len(regs)) % (2 * m):
            return []
    matrices = 1 << (len(regs) - 1 + copies)
    name = f"{choice[:4]}.x{m}" + (".trans" if trans else "")
    if trans:  # lanes 2-4 walk the row; register 0 (the first) and lanes 0-1 pick it
        pinned, units, pick = tuple(zip(lanes[2:5], (1, 2, 4))), (), ()
        span, aligned = (regs[0], lanes[0], lanes[1]), (*regs, lanes[0], lanes[1], *warps)
    else:  # the register at offset 1 and lanes 0-1 walk the row; lanes 2-4 pick it
        pinned, units, pick = tuple(zip(lanes[0:2], (2, 4))), (1,), tuple(regs)
        span, aligned = tuple(lanes[2:5]), (*lanes[2:5], *warps)
    return [Option(name=name, pinned=pinned, units=units, pick=pick, aligned=aligned, low=3, span=span,
                   lo=3, hi=6, phases=matrices)]  # fmt: skip


class _Encoding:
    """M's columns as bit-vectors. Invertibility is enforced lazily: every column is nonzero,
    and each model whose M is singular adds ``M x != 0`` for its kernel (a cut no invertible M
    violates), so UNSAT of the relaxation is UNSAT of the problem and a model is invertible."""

    def __init__(self, d: int):
        self.d = d
        self.m = [z3.BitVec(f"m{i}", d) for i in range(d)]
        self.base: list = [c != 0 for c in self.m] + ([z3.Distinct(*self.m)] if d > 1 else [])

    def independent(self, vectors: list[int]) -> list:
        """Necessary for invertibility: the images of independent tensor vectors are distinct
        and nonzero (a cheap prefix of the cuts)."""
        imgs = [self.image(v) for v in sorted({v for v in vectors if v})]
        return [x != 0 for x in imgs] + ([z3.Distinct(*imgs)] if len(imgs) > 1 else [])

    def image(self, t: int):
        acc = z3.BitVecVal(0, self.d)
        for i in range(self.d):
            if (t >> i) & 1:
                acc = acc ^ self.m[i]
        return acc

    def zero(self, x, lo: int, hi: int):
        hi = min(hi, self.d)
        if hi <= lo:
            return z3.BoolVal(True)
        return x & (((1 << hi) - 1) ^ ((1 << lo) - 1)) == 0

    def option(self, o: Option):
        """(constraints, (nb, nw)): the phase costs nb / nw wavefronts (16-bit vectors, pure
        bit-vector arithmetic: the whole query stays in QF_BV)."""
        cons = [self.image(t) == off for t, off in o.pinned]
        for u in o.units:
            cons.append(z3.Or([self.image(r) == u for r in o.pick]))
        for r in o.pick:
            img = self.image(r)
            cons.append(z3.Or(self.zero(img, 0, o.low), *[img == u for u in o.units]))
        cons += [self.zero(self.image(x), 0, o.low) for x in o.aligned]
        span = f2.span(o.span)[1:]  # every nonzero difference of the span
        blocks = [self.zero(self.image(t), o.lo, o.hi) for t in span]
        words = [z3.And(b, self.zero(self.image(t), o.hi, self.d)) for b, t in zip(blocks, span)]
        one, zero = z3.BitVecVal(1, 16), z3.BitVecVal(0, 16)
        nb = one + sum((z3.If(c, one, zero) for c in blocks), zero)  # lanes sharing a bank
        nw = one + sum((z3.If(c, one, zero) for c in words), zero)  # ... and a word
        return cons, (nb, nw)


def prove_cheapest(
    a: LinearLayout,
    b: LinearLayout,
    elem_bits: int,
    kinds: tuple[str, str],
    cost: int,
    arch: str,
    fixed: tuple[str, str] = ("auto", "auto"),
    timeout_ms: int = 10_000,
    seed: int = 0,
) -> Cheapest:
    """UNSAT, for every pair of options (``fixed``: an instruction the spec pins, else every ld/st
    width and, 16-bit, ldmatrix/stmatrix where ``arch`` has them), of: an invertible M with
    total wavefronts < ``cost``."""
    configure(seed)
    t0 = time.perf_counter()
    b = b.transpose_outs(a.out_dim_names)
    space = Space.of(a)
    if space.bits > MAX_BITS:
        return Cheapest("unknown", 0.0, 0, f"{space.bits} tensor bits: the encoding is limited to {MAX_BITS}")
    opts = []
    for lay, kind, fix in zip((a, b), kinds, fixed):
        choices = ["auto"] if fix == "ld/st" else [fix]
        if fix == "auto" and elem_bits == 16 and (kind == "load" or target.get(arch).has("stsm.x4")):
            choices += [f"{'ldsm' if kind == 'load' else 'stsm'}.x4{t}" for t in (".trans", "")]
        opts.append(options(lay, kind, elem_bits, space, choices))
    if not opts[0] or not opts[1]:  # e.g. ldmatrix on 8-bit data: not in this encoding yet
        fixed_names = " and ".join(f for f, o in zip(fixed, opts) if not o) or "the accesses"
        why = f"{fixed_names}: not in the Z3 encoding of options"
        return Cheapest("unknown", time.perf_counter() - t0, 0, why)
    pairs = [(x, y) for x in opts[0] for y in opts[1] if x.phases + y.phases < cost]
    enc = _Encoding(space.bits)
    queries = 0
    for x, y in sorted(pairs, key=lambda p: p[0].phases + p[1].phases):
        left = timeout_ms - (time.perf_counter() - t0) * 1000
        if left <= 0:
            return Cheapest("unknown", time.perf_counter() - t0, queries, "timeout")
        solver = z3.SolverFor("QF_BV")
        cx, (bx, wx) = enc.option(x)
        cy, (by, wy) = enc.option(y)
        # wavefronts per phase are powers of two: keep the pairs (2^i, 2^j) under the cost
        allowed = [(i, j) for i in range(6) for j in range(6) if (x.phases << i) + (y.phases << j) < cost]
        top = [(i, j) for i, j in allowed if (i + 1, j) not in allowed and (i, j + 1) not in allowed]
        under = z3.Or([z3.And(z3.ULE(bx, wx << i), z3.ULE(by, wy << j)) for i, j in top])
        solver.add(*enc.base, *cx, *cy, under, *enc.independent(x.span), *enc.independent(y.span))
        queries += 1
        r, cols = _solve(solver, enc, t0, timeout_ms)
        if r == z3.unknown:
            return Cheapest(
                "unknown", time.perf_counter() - t0, queries, f"solver: {solver.reason_unknown()}"
            )
        if r == z3.sat:
            model = solver.model()
            waves = [_value(model, n) // _value(model, w) for n, w in ((bx, wx), (by, wy))]
            modeled = x.phases * waves[0] + y.phases * waves[1]
            return Cheapest("refuted", time.perf_counter() - t0, queries, "a cheaper pair exists",
                            _memory(cols, space), (x.name, y.name), modeled)  # fmt: skip
    return Cheapest("proved", time.perf_counter() - t0, queries)


def _value(model, expr) -> int:
    return model.eval(expr, model_completion=True).as_long()


def _solve(solver: z3.Solver, enc: _Encoding, t0: float, timeout_ms: int):
    """(result, M's columns): check, cutting singular models until an invertible one or UNSAT."""
    while True:
        left = timeout_ms - (time.perf_counter() - t0) * 1000
        if left <= 0:
            return z3.unknown, None
        solver.set("timeout", max(1, int(left)))
        r = solver.check()
        if r != z3.sat:
            return r, None
        cols = [_value(solver.model(), m) for m in enc.m]
        kernel = f2.nullspace(cols)
        if not kernel:
            return r, cols
        solver.add(*[enc.image(x) != 0 for x in kernel])


def _memory(cols: list[int], space: Space) -> LinearLayout:
    """The memory layout (offset -> tensor) of M (tensor -> offset, columns ``cols``)."""
    inverse = f2.preimages(cols, space.bits)  # offset bit k -> tensor vector
    return LinearLayout.from_bases(
        {"offset": [list(space.unpack_row_major(x)) for x in inverse]}, dict(space.dims)
    )
