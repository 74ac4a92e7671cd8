"""Which shared-memory instructions Triton 3.9.0 lowers a ``local_alloc`` (a store from registers)
and a ``local_load`` with, for random blocked register layouts, shared encodings, element widths
and targets: the oracle for the scan's instruction policy beyond dot operands (Triton tries
``ldmatrix``/``stmatrix`` on every layout first). Each case is a small TTGIR module compiled here by
Triton (no GPU); the table records the case's parameters and the PTX's shared instructions.

Usage: ``python -m lab.ldst_matrix_oracle OUT.json [N] [SEED]``.

>>> text = module(case_params(__import__("random").Random(1)))
>>> "ttg.local_alloc" in text and "ttg.local_load" in text
True
"""

from __future__ import annotations

import json
import random
import sys

DTYPES = {"i8": 8, "f16": 16, "f32": 32, "f64": 64}


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    """``total`` (a power of two) as a product of ``parts`` random powers of two."""
    out = [1] * parts
    while total > 1:
        out[rng.randrange(parts)] *= 2
        total //= 2
    return out


def _blocked(rank: int, warps: int, rng: random.Random) -> str:
    spt = [rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)]
    tpw = _split(32, rank, rng)
    wpc = _split(warps, rank, rng)
    order = list(range(rank))[::-1] if rng.random() < 0.7 else list(range(rank))
    return (
        f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
        f"order = {order}}}>"
    )


def _shared(rank: int, bits: int, rng: random.Random) -> str:
    if rank == 2 and bits <= 32 and rng.random() < 0.35:
        width = rng.choice([0, 32, 64, 128])
        return (
            f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = {str(rng.random() < 0.3).lower()}, "
            f"elementBitWidth = {bits}}}>"
        )
    max_phase = rng.choice([1, 1, 2, 4, 8])
    per_phase = rng.choice([1, 2, 4]) if max_phase > 1 else 1
    vec = rng.choice([1, 2, 4, 8]) if max_phase > 1 else 1
    order = list(range(rank))[::-1] if rng.random() < 0.7 else list(range(rank))
    return f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, order = {order}}}>"


def case_params(rng: random.Random) -> dict:
    """One random case: rank, shape, dtype, the two register layouts, the shared encoding, arch."""
    rank = rng.choice([1, 2, 2])
    dtype = rng.choice(list(DTYPES))
    shape = (
        [rng.choice([128, 256, 512, 1024])]
        if rank == 1
        else [rng.choice([16, 32, 64, 128]) for _ in range(2)]
    )
    warps = rng.choice([4, 4, 8])
    return {
        "rank": rank,
        "shape": shape,
        "dtype": dtype,
        "warps": warps,
        "store_layout": _blocked(rank, warps, rng),
        "load_layout": _blocked(rank, warps, rng),
        "shared": _shared(rank, DTYPES[dtype], rng),
        "arch": rng.choice([80, 90, 90]),
    }


def _offsets(p: dict, lay: str, tag: str) -> list[str]:
    """Lines computing ``%o{tag}``: the row-major element offsets of the tensor in layout ``#{lay}``."""
    shape = p["shape"]
    if p["rank"] == 1:
        return [
            f"%o{tag} = tt.make_range {{end = {shape[0]} : i32, start = 0 : i32}} : tensor<{shape[0]}xi32, #{lay}>"
        ]
    m, n = shape
    sl = lambda d: f"#ttg.slice<{{dim = {d}, parent = #{lay}}}>"  # noqa: E731
    return [
        f"%m{tag} = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {sl(1)}>",
        f"%n{tag} = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {sl(0)}>",
        f"%me{tag} = tt.expand_dims %m{tag} {{axis = 1 : i32}} : tensor<{m}xi32, {sl(1)}> -> tensor<{m}x1xi32, #{lay}>",
        f"%ne{tag} = tt.expand_dims %n{tag} {{axis = 0 : i32}} : tensor<{n}xi32, {sl(0)}> -> tensor<1x{n}xi32, #{lay}>",
        f"%c{tag} = arith.constant dense<{n}> : tensor<{m}x1xi32, #{lay}>",
        f"%ms{tag} = arith.muli %me{tag}, %c{tag} : tensor<{m}x1xi32, #{lay}>",
        f"%mb{tag} = tt.broadcast %ms{tag} : tensor<{m}x1xi32, #{lay}> -> tensor<{m}x{n}xi32, #{lay}>",
        f"%nb{tag} = tt.broadcast %ne{tag} : tensor<1x{n}xi32, #{lay}> -> tensor<{m}x{n}xi32, #{lay}>",
        f"%o{tag} = arith.addi %mb{tag}, %nb{tag} : tensor<{m}x{n}xi32, #{lay}>",
    ]


def module(p: dict) -> str:
    """The case's TTGIR: a global load in ``store_layout``, ``local_alloc`` from it, ``local_load``
    into ``load_layout``, a global store."""
    shp = "x".join(str(s) for s in p["shape"])
    t = p["dtype"]
    ten = lambda lay: f"tensor<{shp}x{t}, #{lay}>"  # noqa: E731
    ptr = lambda lay: f"tensor<{shp}x!tt.ptr<{t}>, #{lay}>"  # noqa: E731
    idx = lambda lay: f"tensor<{shp}xi32, #{lay}>"  # noqa: E731
    mem = f"!ttg.memdesc<{shp}x{t}, #shared, #smem>"
    body = [
        *_offsets(p, "a", "a"),
        f"%pa = tt.splat %x : !tt.ptr<{t}> -> {ptr('a')}",
        f"%qa = tt.addptr %pa, %oa : {ptr('a')}, {idx('a')}",
        f"%v = tt.load %qa : {ptr('a')}",
        f"%s = ttg.local_alloc %v : ({ten('a')}) -> {mem}",
        f"%w = ttg.local_load %s : {mem} -> {ten('b')}",
        *_offsets(p, "b", "b"),
        f"%pb = tt.splat %y : !tt.ptr<{t}> -> {ptr('b')}",
        f"%qb = tt.addptr %pb, %ob : {ptr('b')}, {idx('b')}",
        f"tt.store %qb, %w : {ptr('b')}",
        "tt.return",
    ]
    head = [
        f"#a = {p['store_layout']}",
        f"#b = {p['load_layout']}",
        f"#shared = {p['shared']}",
        "#smem = #ttg.shared_memory",
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {p["warps"]} : i32, '
        f'ttg.target = "cuda:{p["arch"]}", "ttg.threads-per-warp" = 32 : i32}} {{',
        f"  tt.func public @k(%x: !tt.ptr<{t}>, %y: !tt.ptr<{t}>) {{",
    ]
    return "\n".join(head + ["    " + b for b in body] + ["  }", "}"]) + "\n"


def compile_case(p: dict) -> dict | None:
    """Triton's PTX for the case: its shared instruction counts (as :mod:`~bankproof.verifier.triton.lowering`
    names them), or ``None`` where Triton refuses the module."""
    import os
    import tempfile

    import triton
    from bankproof.verifier.ptx.parse import parse_kernel
    from bankproof.verifier.triton.lowering import kernel_counts
    from triton.backends.compiler import GPUTarget

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ttgir")
        with open(path, "w") as f:
            f.write(module(p))
        try:
            k = triton.compile(path, target=GPUTarget("cuda", p["arch"], 32))
        except Exception:  # noqa: BLE001 - a module Triton refuses is left out of the table
            return None
    counts, _ = kernel_counts(parse_kernel(k.asm["ptx"]))
    return dict(counts)


def main(out: str, n: int = 300, seed: int = 0) -> None:
    rng = random.Random(seed)
    rows, refused = [], 0
    while len(rows) < n:
        p = case_params(rng)
        got = compile_case(p)
        if got is None:
            refused += 1
            continue
        rows.append({**p, "ptx_counts": got})
    with open(out, "w") as f:
        json.dump({"triton": __import__("triton").__version__, "seed": seed, "refused": refused, "cases": rows}, f,
                  indent=0)  # fmt: skip
    print(f"{len(rows)} cases, {refused} refused by Triton")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
