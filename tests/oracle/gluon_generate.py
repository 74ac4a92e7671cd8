"""Random valid Triton 3.9.0 Gluon layout objects, as ``{"cls", "args"}`` recipes (a parent is a
nested recipe), for the agreement test against Triton's ``to_linear_layout``.

Each case: ``{"id", "kind", "recipe", "shape", "memory"}``; :func:`build` makes the object.
"""

from __future__ import annotations

import random

from tests.oracle.generate import _cga, _perm, _shape_around, _split

KINDS = (
    "BlockedLayout",
    "SliceLayout",
    "DistributedLinearLayout",
    "DotOperandLayout",
    "NVMMADistributedLayout",
    "NVMMASharedLayout",
    "SwizzledSharedLayout",
    "SharedLinearLayout",
    "PaddedSharedLayout",
    "AMDMFMALayout",
    "AMDWMMALayout",
)


def build(recipe: dict, modules: dict):
    """The Gluon object of a recipe; ``modules`` maps class names to classes."""
    args = dict(recipe["args"])
    if "parent" in args:
        args["parent"] = build(args["parent"], modules)
    return modules[recipe["cls"]](**args)


def blocked(rng: random.Random, rank: int | None = None):
    rank = rank or rng.choice([1, 2, 2, 3])
    warps = rng.choice([1, 2, 4, 8])
    spt = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    tpw, wpc = _split(rng, 32, rank), _split(rng, warps, rank)
    cga, _ = _cga(rng, rank)
    args = {"size_per_thread": spt, "threads_per_warp": tpw, "warps_per_cta": wpc,
            "order": _perm(rng, rank), "cga_layout": cga}  # fmt: skip
    tile = [a * b * c for a, b, c in zip(spt, tpw, wpc)]
    return {"cls": "BlockedLayout", "args": args}, tile


def linear(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    wbits = rng.randint(0, 3)
    nbits = max(1, rng.randint(3 + wbits, 9 + wbits))
    per_dim = [0] * rank
    for _ in range(nbits):
        per_dim[rng.randrange(rank)] += 1
    units = [[1 << i if d == e else 0 for e in range(rank)] for d in range(rank) for i in range(per_dim[d])]
    rng.shuffle(units)
    zero = [0] * rank
    lane = [units.pop() if units and rng.random() < 0.9 else zero[:] for _ in range(5)]
    warp = [units.pop() if units and rng.random() < 0.85 else zero[:] for _ in range(wbits)]
    tile = [1 << n for n in per_dim]
    args = {"reg_bases": units, "lane_bases": lane, "warp_bases": warp, "block_bases": [], "shape": tile}
    return {"cls": "DistributedLinearLayout", "args": args}, tile


def mma(rng: random.Random):
    version = rng.choice([2, 3])
    cga, _ = _cga(rng, 2)
    if version == 2:
        rank = rng.choice([2, 2, 3]) if not cga else 2
        wpc = _split(rng, rng.choice([1, 2, 4, 8]), rank)
        instr = [16, 8] if rank == 2 else [1, 16, 8]
        cga = cga if rank == 2 else []
        tile = [w * t for w, t in zip(wpc, instr)]
    else:
        wpc = rng.choice([[4, 1], [4, 2], [8, 1], [4, 4]])
        n = rng.choice([8, 16, 32, 64, 128, 256])
        instr = [16, n, 16]
        tile = [16 * wpc[0], n * wpc[1]]
    args = {"version": [version, 0], "warps_per_cta": wpc, "instr_shape": instr, "cga_layout": cga}
    return {"cls": "NVMMADistributedLayout", "args": args}, tile


def dot_operand(rng: random.Random):
    if rng.random() < 0.3:
        parent, tile = blocked(rng, rank=rng.choice([2, 3]))
        args = {"operand_index": rng.randrange(2), "parent": parent, "k_width": 0}
        return {"cls": "DotOperandLayout", "args": args}, tile
    parent, tile = mma(rng)
    v3 = parent["args"]["version"][0] == 3
    op = 0 if v3 else rng.randrange(2)
    kw = rng.choice([1, 2, 4]) if v3 else rng.choice([1, 2, 4, 8])
    tile = list(tile)
    tile[-1 if op == 0 else -2] = kw * 16
    return {"cls": "DotOperandLayout", "args": {"operand_index": op, "parent": parent, "k_width": kw}}, tile


def slice_(rng: random.Random):
    pick = rng.random()
    parent, tile = (
        blocked(rng, rank=rng.choice([2, 3])) if pick < 0.5 else mma(rng) if pick < 0.8 else dot_operand(rng)
    )
    dim = rng.randrange(len(tile))
    return {"cls": "SliceLayout", "args": {"dim": dim, "parent": parent}}, [
        t for i, t in enumerate(tile) if i != dim
    ]


def swizzled_shared(rng: random.Random):
    rank = rng.choice([1, 2, 2, 2, 3])
    cga, _ = _cga(rng, rank)
    args = {"vec": rng.choice([1, 2, 4, 8, 16]), "per_phase": rng.choice([1, 1, 2, 4, 8]),
            "max_phase": rng.choice([1, 2, 4, 8, 16]), "order": _perm(rng, rank), "cga_layout": cga}  # fmt: skip
    return {"cls": "SwizzledSharedLayout", "args": args}, [16] * rank


def nvmma_shared(rng: random.Random):
    swizzle = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32]) if swizzle else rng.choice([8, 16, 32, 64])
    fp4 = swizzle == 128 and bits == 8 and rng.random() < 0.2
    rank = 2 if rng.random() < 0.8 else 3
    transposed = rng.random() < 0.4 and not (rank == 3 and swizzle == 0)
    cga, _ = _cga(rng, rank)
    row = 8 * max(swizzle, 16) // bits // (2 if fp4 else 1)
    tile = [rng.choice([8, 16, 64, 128, 256] if rank == 2 else [8, 16, 64]) for _ in range(rank)]
    contig = 0 if transposed else rank - 1
    tile[contig] = max(tile[contig], row * rng.choice([1, 2, 4]))
    other = rank - 1 if transposed else rank - 2
    tile[other] = max(tile[other], 8)
    for b in cga:
        tile = [t * 2 if x else t for t, x in zip(tile, b)]
    args = {"swizzle_byte_width": swizzle, "element_bitwidth": bits, "rank": rank, "transposed": transposed,
            "fp4_padded": fp4, "cga_layout": cga}  # fmt: skip
    return {"cls": "NVMMASharedLayout", "args": args}, tile


def _unit_bases(rng: random.Random, sizes: list[int]) -> list[list[int]]:
    rank = len(sizes)
    units = [[1 << i if d == e else 0 for e in range(rank)] for d, s in enumerate(sizes)
             for i in range(s.bit_length() - 1)]  # fmt: skip
    rng.shuffle(units)
    return units


def shared_linear(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    sizes = [rng.choice([1, 2, 4, 8, 16, 32]) for _ in range(rank)]
    if max(sizes) == 1:
        sizes[0] = 8
    units = _unit_bases(rng, sizes)
    bases = [u[:] for u in units]
    for i in range(len(bases)):
        for j in range(i):
            if rng.random() < 0.15:
                bases[i] = [a ^ b for a, b in zip(bases[i], units[j])]
    args = {"offset_bases": bases, "block_bases": [], "alignment": rng.choice([16, 128, 1024])}
    return {"cls": "SharedLinearLayout", "args": args}, sizes


def padded_shared(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    shape = [rng.choice([2, 4, 8, 16, 32]) for _ in range(rank)]
    intervals = sorted(rng.sample([16, 32, 64, 128, 256], rng.choice([1, 1, 2])))
    pairs = [[i, rng.choice([1, 2, 4, 8])] for i in intervals]
    args = {"interval_padding_pairs": pairs, "offset_bases": _unit_bases(rng, shape), "cga_layout": [],
            "shape": shape}  # fmt: skip
    return {"cls": "PaddedSharedLayout", "args": args}, shape


def amd_mfma(rng: random.Random):
    from tests.oracle.generate_amd import mfma_params, mfma_tile

    args = mfma_params(rng)
    return {"cls": "AMDMFMALayout", "args": args}, mfma_tile(args)


def amd_wmma(rng: random.Random):
    version = rng.randint(1, 3)
    k = rng.choice({1: [16], 2: [16, 32], 3: [32, 64, 128]}[version])
    steps = [0, 0]

    def basis():
        d = rng.randrange(2)
        b = [0, 0]
        b[d] = 1 << steps[d]
        steps[d] += 1
        return b

    regs = [basis() for _ in range(rng.choice([0, 1, 2]))]
    warps = [basis() for _ in range(rng.choice([0, 1, 2, 3]))]
    args = {"version": version, "transposed": rng.random() < 0.4, "warp_bases": warps, "reg_bases": regs,
            "instr_shape": [16, 16, k]}  # fmt: skip
    return {"cls": "AMDWMMALayout", "args": args}, [16 << steps[0], 16 << steps[1]]


_MAKERS = {
    "BlockedLayout": (blocked, False, (-2, 2)),
    "SliceLayout": (slice_, False, (-2, 2)),
    "DistributedLinearLayout": (linear, False, (-1, 1)),
    "DotOperandLayout": (dot_operand, False, (-2, 2)),
    "NVMMADistributedLayout": (mma, False, (-2, 2)),
    "NVMMASharedLayout": (nvmma_shared, True, (0, 0)),
    "SwizzledSharedLayout": (swizzled_shared, True, (-3, 2)),
    "SharedLinearLayout": (shared_linear, True, (0, 0)),
    "PaddedSharedLayout": (padded_shared, True, (0, 0)),
    "AMDMFMALayout": (amd_mfma, False, (-2, 2)),
    "AMDWMMALayout": (amd_wmma, False, (0, 2)),
}


def cases(seed: int, per_kind: int) -> list[dict]:
    """``per_kind`` random objects of each Gluon class (deterministic for a seed)."""
    rng = random.Random(seed)
    out: list[dict] = []
    for _ in range(per_kind):
        for kind, (make, memory, (lo, hi)) in _MAKERS.items():
            recipe, tile = make(rng)
            shape = _shape_around(rng, tile, lo, hi) if (lo, hi) != (0, 0) else tile
            out.append({"id": len(out), "kind": kind, "recipe": recipe, "shape": shape, "memory": memory})
    return out
