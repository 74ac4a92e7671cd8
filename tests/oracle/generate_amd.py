"""Random valid AMD Triton layout attributes (as text), for the agreement test against Triton
3.9.0: ``amd_mfma`` (versions 1-4, every instruction shape, transposed, tilesPerWarp, 64-bit
results, rank 3), ``amd_wmma`` (versions 1-3, tile grids on registers and warps), ``dot_op`` with
either parent, and ``blocked`` with 64-lane warps.

Each case: ``{"id", "kind", "text", "shape", "memory", "warps", "ctas", "lanes", "amd"}``.
"""

from __future__ import annotations

import random

from tests.oracle.generate import _fmt, _perm, _shape_around, _split

KINDS = ("amd_mfma", "amd_mfma_dot_op", "amd_wmma", "amd_wmma_dot_op", "blocked_wave64")


def mfma_params(rng: random.Random) -> dict:
    """Random valid ``amd_mfma`` fields (Gluon's names: the agreement tests build objects too)."""
    version = rng.randint(1, 4)
    rank = 2 if rng.random() < 0.8 else 3
    shapes = [(32, 32, 8), (16, 16, 16), (64, 4, 4), (4, 64, 4)]
    shapes += [(16, 16, 32), (32, 32, 16)] if version == 4 else []
    m, n, k = rng.choice(shapes)
    tiles = [1] * rank
    if rng.random() < 0.4:
        tiles[-2], tiles[-1] = rng.choice([1, 2, 4]), rng.choice([1, 2, 4])
    return {
        "version": version,
        "instr_shape": [m, n, k],
        "transposed": (m, n) == (64, 4) or rng.random() < 0.5,
        "warps_per_cta": _split(rng, rng.choice([1, 2, 4, 8]), rank),
        "element_bitwidth": 64 if (m, n) in ((16, 16), (32, 32)) and rng.random() < 0.15 else 32,
        "tiles_per_warp": tiles,
    }


def mfma_tile(p: dict) -> list[int]:
    """The tensor one CTA's warps and tiles cover (shapes are drawn around it)."""
    wpc, tiles, (m, n, _) = p["warps_per_cta"], p["tiles_per_warp"], p["instr_shape"]
    tile = [wpc[0]] * len(wpc)
    tile[-2], tile[-1] = m * wpc[-2] * tiles[-2], n * wpc[-1] * tiles[-1]
    return tile


def mfma(rng: random.Random):
    p = mfma_params(rng)
    rank = len(p["warps_per_cta"])
    extra = (f", tilesPerWarp = {_fmt(p['tiles_per_warp'])}" if p["tiles_per_warp"] != [1] * rank else "") + (
        ", elementBitWidth = 64" if p["element_bitwidth"] == 64 else ""
    )
    text = (
        f"#ttg.amd_mfma<{{version = {p['version']}, warpsPerCTA = {_fmt(p['warps_per_cta'])}, "
        f"instrShape = {_fmt(p['instr_shape'])}, isTransposed = {_fmt(p['transposed'])}{extra}}}>"
    )
    warps = 1
    for w in p["warps_per_cta"]:
        warps *= w
    return text, mfma_tile(p), warps, tuple(p["instr_shape"])


def mfma_dot(rng: random.Random):
    parent, tile, warps, (m, n, k) = mfma(rng)
    op = rng.randrange(2)
    kw = rng.choice([1, 2, 4, 8, 16])
    tile = list(tile)
    k_i = len(tile) - 1 if op == 0 else len(tile) - 2
    tile[k_i] = max(k, kw * (64 // (m if op == 0 else n)))
    return f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}, kWidth = {kw}}}>", tile, warps


def wmma(rng: random.Random):
    version = rng.randint(1, 3)
    rank = 2 if rng.random() < 0.8 else 3
    k = rng.choice({1: [16], 2: [16, 32], 3: [32, 64, 128]}[version])
    transposed = rng.random() < 0.4
    free = [[(d, 1 << i) for i in range(3)] for d in range(rank)]  # next tile step per dim
    steps = {d: 0 for d in range(rank)}

    def basis():
        d = rng.randrange(rank)
        b = [0] * rank
        b[d] = 1 << steps[d]
        steps[d] += 1
        return b

    del free
    regs = [basis() for _ in range(rng.choice([0, 0, 1, 2]))]
    warp_bits = rng.choice([0, 1, 2, 3])
    warp = [basis() if rng.random() < 0.9 else [0] * rank for _ in range(warp_bits)]
    parts = ([f"register = {_fmt(regs)}"] if regs else []) + [f"warp = {_fmt(warp)}"]
    rank_text = f", rank = {rank}" if rank != 2 else ""
    text = (
        f"#ttg.amd_wmma<{{version = {version}, isTranspose = {_fmt(transposed)}, ctaLayout = {{{', '.join(parts)}}}, "
        f"instrShape = {_fmt([16, 16, k])}{rank_text}}}>"
    )
    tile = [1] * rank
    tile[-2], tile[-1] = 16, 16
    for d in range(rank):
        tile[d] *= 1 << steps[d]
    return text, tile, 1 << warp_bits, k


def wmma_dot(rng: random.Random):
    parent, tile, warps, k = wmma(rng)
    op = rng.randrange(2)
    kw = rng.choice([8, 16] if "version = 1," in parent else [4, 8, 16])
    tile = list(tile)
    tile[len(tile) - 1 if op == 0 else len(tile) - 2] = max(k, 2 * kw)
    return f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}, kWidth = {kw}}}>", tile, warps


def blocked64(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3])
    warps = rng.choice([1, 2, 4, 8])
    spt = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    tpw, wpc = _split(rng, 64, rank), _split(rng, warps, rank)
    text = (
        f"#ttg.blocked<{{sizePerThread = {_fmt(spt)}, threadsPerWarp = {_fmt(tpw)}, warpsPerCTA = "
        f"{_fmt(wpc)}, order = {_fmt(_perm(rng, rank))}}}>"
    )
    return text, [a * b * c for a, b, c in zip(spt, tpw, wpc)], warps


def cases(seed: int, per_kind: int) -> list[dict]:
    """``per_kind`` random attributes of each AMD kind (deterministic for a seed)."""
    rng = random.Random(seed)
    out: list[dict] = []

    def add(kind, text, tile, warps, lanes, lo=-2, hi=2):
        shape = _shape_around(rng, tile, lo, hi)
        while _prod(shape) > 1 << 20:
            shape[shape.index(max(shape))] //= 2
        out.append({"id": len(out), "kind": kind, "text": text, "shape": shape, "memory": False,
                    "warps": warps, "ctas": 1, "lanes": lanes, "amd": True, "elem": "i16"})  # fmt: skip

    for _ in range(per_kind):
        text, tile, warps, _ = mfma(rng)
        add("amd_mfma", text, tile, warps, 64)
        add("amd_mfma_dot_op", *mfma_dot(rng), 64)
        text, tile, warps, _ = wmma(rng)
        add("amd_wmma", text, tile, warps, 32, 0, 2)
        add("amd_wmma_dot_op", *wmma_dot(rng), 32, 0, 2)
        add("blocked_wave64", *blocked64(rng), 64)
    return out


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out
