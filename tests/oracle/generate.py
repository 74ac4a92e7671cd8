"""Random valid Triton layout attributes (as text), for the agreement test against Triton.

Each case: ``{"id", "kind", "text", "shape", "memory", "warps", "ctas", "elem"}``. Shapes are
drawn smaller and larger than the layout's tile; ranks 1-3; 1-8 warps; 8- to 64-bit elements.
"""

from __future__ import annotations

import random

ELEMS = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}


def _split(rng: random.Random, total: int, rank: int) -> list[int]:
    """Random powers of two, one per dim, multiplying to ``total``."""
    out = [1] * rank
    t = total
    while t > 1:
        out[rng.randrange(rank)] *= 2
        t //= 2
    return out


def _perm(rng: random.Random, rank: int) -> list[int]:
    p = list(range(rank))
    rng.shuffle(p)
    return p


def _fmt(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _cga(rng: random.Random, rank: int) -> tuple[list[list[int]], int]:
    """No CGA most of the time; else 1-2 block bits, each along a dim or broadcast."""
    if rng.random() < 0.75:
        return [], 1
    n = rng.choice([1, 2])
    nxt = [1] * rank
    bases = []
    for _ in range(n):
        b = [0] * rank
        if rng.random() < 0.85:
            d = rng.randrange(rank)
            b[d] = nxt[d]
            nxt[d] *= 2
        bases.append(b)
    return bases, 1 << n


def _cga_text(cga: list[list[int]]) -> str:
    return f", CGALayout = {_fmt(cga)}" if cga else ""


def _shape_around(
    rng: random.Random, tile: list[int], lo: int = -2, hi: int = 2, minimum: int = 1
) -> list[int]:
    out = []
    for t in tile:
        k = rng.randint(lo, hi)
        s = t << k if k >= 0 else max(1, t >> -k)
        out.append(max(minimum, min(s, 1024)))
    return out


def blocked(rng: random.Random, rank: int | None = None, warps: int | None = None):
    rank = rank or rng.choice([1, 2, 2, 3])
    warps = warps or rng.choice([1, 2, 4, 8])
    spt = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    tpw = _split(rng, 32, rank)
    wpc = _split(rng, warps, rank)
    order = _perm(rng, rank)
    cga, ctas = _cga(rng, rank)
    text = (
        f"#ttg.blocked<{{sizePerThread = {_fmt(spt)}, threadsPerWarp = {_fmt(tpw)}, warpsPerCTA = "
        f"{_fmt(wpc)}, order = {_fmt(order)}{_cga_text(cga)}}}>"
    )
    tile = [a * b * c for a, b, c in zip(spt, tpw, wpc)]
    return text, tile, warps, ctas


def linear(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    warps = rng.choice([1, 2, 4, 8])
    wbits = warps.bit_length() - 1
    nbits = rng.randint(5 + wbits - 2, 5 + wbits + 4)
    nbits = max(nbits, 1)
    # Distribute the tensor bits over dims, then hand them out to register/lane/warp.
    per_dim = [0] * rank
    for _ in range(nbits):
        per_dim[rng.randrange(rank)] += 1
    units = [[0] * rank for _ in range(nbits)]
    k = 0
    for d in range(rank):
        for i in range(per_dim[d]):
            units[k][d] = 1 << i
            k += 1
    rng.shuffle(units)
    zero = [0] * rank
    lane = [units.pop() if units and rng.random() < 0.9 else zero[:] for _ in range(5)]
    warp = [units.pop() if units and rng.random() < 0.85 else zero[:] for _ in range(wbits)]
    reg = list(units)
    if not reg:
        reg = []
    text = f"#ttg.linear<{{register = {_fmt(reg)}, lane = {_fmt(lane)}, warp = {_fmt(warp)}, block = []}}>"
    tile = [1 << n for n in per_dim]
    return text, tile, warps, 1


def nvidia_mma(rng: random.Random, version: int | None = None):
    version = version or rng.choice([2, 3])
    cga, ctas = _cga(rng, 2)
    if version == 2:
        rank = rng.choice([2, 2, 3]) if not cga else 2
        warps = rng.choice([1, 2, 4, 8])
        wpc = _split(rng, warps, rank)
        instr = [16, 8] if rank == 2 else [1, 16, 8]
        if rank == 3:
            cga = []
            ctas = 1
        text = (
            f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {_fmt(wpc)}, "
            f"instrShape = {_fmt(instr)}{_cga_text(cga)}}}>"
        )
        tile = [w * t for w, t in zip(wpc, instr)]
    else:
        wpc = rng.choice([[4, 1], [4, 2], [8, 1], [4, 4]])
        warps = wpc[0] * wpc[1]
        n = rng.choice([8, 16, 32, 64, 128, 256])
        instr = [16, n, 16]
        text = (
            f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = {_fmt(wpc)}, "
            f"instrShape = {_fmt(instr)}{_cga_text(cga)}}}>"
        )
        tile = [16 * wpc[0], n * wpc[1]]
        rank = 2
    return text, tile, warps, ctas, version, rank


def dot_op(rng: random.Random):
    if rng.random() < 0.35:
        ptext, ptile, warps, ctas = blocked(rng, rank=rng.choice([2, 3]))
        op = rng.randrange(2)
        text = f"#ttg.dot_op<{{opIdx = {op}, parent = {ptext}}}>"
        return text, ptile, warps, ctas, "i16"
    ptext, ptile, warps, ctas, version, rank = nvidia_mma(rng)
    op = 0 if version == 3 else rng.randrange(2)
    kw = rng.choice([1, 2, 4, 8]) if version == 2 else rng.choice([1, 2, 4])
    bits = {1: 32, 2: 16, 4: 8, 8: 8}[kw]
    text = f"#ttg.dot_op<{{opIdx = {op}, parent = {ptext}, kWidth = {kw}}}>"
    tile = list(ptile)
    if op == 0:
        tile[-1] = kw * 8 * 2
    else:
        tile[-2] = kw * 8 * 2
    return text, tile, warps, ctas, ELEMS[bits]


def slice_(rng: random.Random):
    choice = rng.random()
    if choice < 0.5:
        ptext, ptile, warps, ctas = blocked(rng, rank=rng.choice([2, 3]))
    elif choice < 0.8:
        ptext, ptile, warps, ctas, _, _ = nvidia_mma(rng)
    else:
        ptext, ptile, warps, ctas, _ = dot_op(rng)
    dim = rng.randrange(len(ptile))
    tile = [t for i, t in enumerate(ptile) if i != dim]
    return f"#ttg.slice<{{dim = {dim}, parent = {ptext}}}>", tile, warps, ctas


def swizzled_shared(rng: random.Random):
    rank = rng.choice([1, 2, 2, 2, 3])
    vec = rng.choice([1, 2, 4, 8, 16])
    per_phase = rng.choice([1, 1, 2, 4, 8])
    max_phase = rng.choice([1, 2, 4, 8, 16])
    order = _perm(rng, rank)
    cga, ctas = _cga(rng, rank)
    text = (
        f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, "
        f"order = {_fmt(order)}{_cga_text(cga)}}}>"
    )
    tile = [16] * rank
    return text, tile, ctas


def nvmma_shared(rng: random.Random):
    swizzle = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32]) if swizzle else rng.choice([8, 16, 32, 64])
    fp4 = swizzle == 128 and bits == 8 and rng.random() < 0.2
    transposed = rng.random() < 0.4
    rank = 2 if rng.random() < 0.8 else 3
    if rank == 3 and swizzle == 0:
        transposed = False  # refused: Triton 3.9 builds a non-injective layout there
    cga, ctas = _cga(rng, rank)
    by_field = rank == 3 and rng.random() < 0.5  # Triton 3.9 writes ``rank = 3`` when no CGALayout says it
    if by_field:
        cga, ctas = [], 1
    while rank == 3 and not cga and not by_field:
        cga, ctas = _cga(rng, rank)
    row = 8 * max(swizzle, 16) // bits // (2 if fp4 else 1)
    tile = [rng.choice([8, 16, 64, 128, 256, 512]) for _ in range(rank)]
    contig = 0 if transposed else rank - 1
    tile[contig] = max(tile[contig], row * rng.choice([1, 2, 4]))
    if rank > 1:
        other = rank - 1 if transposed else rank - 2
        tile[other] = max(tile[other], 8)
    for b in cga:
        for d, x in enumerate(b):
            if x:
                tile[d] *= 2
    fp4s = ", fp4Padded = true" if fp4 else ""
    text = (
        f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swizzle}, transposed = {_fmt(transposed)}, "
        f"elementBitWidth = {bits}{fp4s}{', rank = 3' if by_field else ''}{_cga_text(cga)}}}>"
    )
    return text, tile, ctas, ELEMS[bits]


def shared_linear(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    sizes = [rng.choice([1, 2, 4, 8, 16, 32]) for _ in range(rank)]
    units = []
    for d, s in enumerate(sizes):
        for i in range(s.bit_length() - 1):
            u = [0] * rank
            u[d] = 1 << i
            units.append(u)
    rng.shuffle(units)
    # XOR a few pairs (swizzle-like), keeping invertibility (upper-triangular mixing).
    bases = [u[:] for u in units]
    for i in range(len(bases)):
        for j in range(i):
            if rng.random() < 0.15:
                bases[i] = [a ^ b for a, b in zip(bases[i], units[j])]
    align = rng.choice([16, 128, 1024])
    if not bases:
        return None
    text = f"#ttg.shared_linear<{{offset = {_fmt(bases)}}}, alignment = {align}>"
    return text, sizes, 1


def padded_shared(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    shape = [rng.choice([2, 4, 8, 16, 32]) for _ in range(rank)]
    n = rng.choice([1, 1, 2])
    intervals = sorted(rng.sample([16, 32, 64, 128, 256], n))
    pads = [rng.choice([1, 2, 4, 8]) for _ in intervals]
    iv = ", ".join(f"{i}:+{p}" for i, p in zip(intervals, pads))
    order = _perm(rng, rank)
    text = f"#ttg.padded_shared<[{iv}] {{order = {_fmt(order)}, shape = {_fmt(shape)}}}>"
    return text, shape, 1


def cases(seed: int, per_kind: int) -> list[dict]:
    """``per_kind`` random cases of each kind (deterministic for a seed)."""
    rng = random.Random(seed)
    out: list[dict] = []
    per = {}

    def add(kind, text, shape, memory, warps=1, ctas=1, elem="i16"):
        out.append(
            {
                "id": len(out),
                "kind": kind,
                "text": text,
                "shape": shape,
                "memory": memory,
                "warps": warps,
                "ctas": ctas,
                "elem": elem,
            }
        )

    while len(per) < 9 or min(per.values()) < per_kind:
        per = {}
        for c in out:
            per[c["kind"]] = per.get(c["kind"], 0) + 1
        if len(per) == 9 and min(per.values()) >= per_kind:
            break
        text, tile, warps, ctas = blocked(rng)
        add("blocked", text, _shape_around(rng, tile), False, warps, ctas)
        text, tile, warps, ctas = linear(rng)
        add("linear", text, _shape_around(rng, tile, -1, 1), False, warps, ctas)
        text, tile, warps, ctas, _, _ = nvidia_mma(rng)
        add("nvidia_mma", text, _shape_around(rng, tile), False, warps, ctas)
        text, tile, warps, ctas, elem = dot_op(rng)
        add("dot_op", text, _shape_around(rng, tile), False, warps, ctas, elem)
        text, tile, warps, ctas = slice_(rng)
        add("slice", text, _shape_around(rng, tile), False, warps, ctas)
        text, tile, ctas = swizzled_shared(rng)
        add("swizzled_shared", text, _shape_around(rng, tile, -3, 2), True, 1, ctas)
        text, tile, ctas, elem = nvmma_shared(rng)
        add("nvmma_shared", text, tile, True, 1, ctas, elem)
        sl = shared_linear(rng)
        if sl:
            add("shared_linear", sl[0], sl[1], True)
        text, shape, _ = padded_shared(rng)
        add("padded_shared", text, shape, True)
    return out
