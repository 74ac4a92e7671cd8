"""The CuTe DSL as the oracle of bankproof's MMA atom table: build every warp-level MMA atom the
DSL defines (on the CPU; no GPU is needed to trace a ``@cute.jit`` function) and write each one's
``tv_layout_A/B/C`` as the DSL prints them, with the DSL's version, to a JSON table that
``tests/test_cute_atom_oracle.py`` holds bankproof's table to.

    python -m lab.cute_oracle tests/data/cute_atoms_dsl.json   # in an environment with nvidia-cutlass-dsl

(The DSL is about 300 MB, so it is not a test dependency: the table is committed and the test
re-derives it whenever the DSL is installed.)
"""

from __future__ import annotations

import json
import os
import random
import sys

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")  # the warpgroup (GMMA) atoms exist on sm_90a only
SEED, CASES = 20261126, 240


def atoms() -> dict[str, tuple[str, str, str]]:
    """Atom name (CuTe's C++ spelling) -> the DSL's (A, B, C) TV layouts."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warp

    f16, bf16, f32 = cutlass.Float16, cutlass.BFloat16, cutlass.Float32
    e4m3, e5m2 = cutlass.Float8E4M3FN, cutlass.Float8E5M2
    ops = {}
    for k in (8, 16):
        ops[f"SM80_16x8x{k}_F16F16F16F16_TN"] = lambda k=k: warp.MmaF16BF16Op(f16, f16, (16, 8, k))
        ops[f"SM80_16x8x{k}_F32F16F16F32_TN"] = lambda k=k: warp.MmaF16BF16Op(f16, f32, (16, 8, k))
        ops[f"SM80_16x8x{k}_F32BF16BF16F32_TN"] = lambda k=k: warp.MmaF16BF16Op(bf16, f32, (16, 8, k))
    for k in (4, 8):
        ops[f"SM80_16x8x{k}_F32TF32TF32F32_TN"] = lambda k=k: warp.MmaTF32Op((16, 8, k))
    for name, ab in (("E4M3E4M3", e4m3), ("E5M2E5M2", e5m2)):
        ops[f"SM89_16x8x32_F32{name}F32_TN"] = lambda ab=ab: warp.MmaFP8Op(ab, f32, (16, 8, 32))
    out: dict[str, tuple[str, str, str]] = {}

    @cute.jit
    def trace():
        for name, make in ops.items():
            atom = cute.make_mma_atom(make())
            out[name] = (str(atom.tv_layout_A), str(atom.tv_layout_B), str(atom.tv_layout_C))

    trace()
    return out


def gmma_atoms() -> dict[str, str]:
    """``Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` (C++ spelling) -> the DSL's print of
    ``warpgroup.make_smem_layout_atom`` for f16, fp8 and tf32."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import warpgroup

    types = {"half_t": cutlass.Float16, "float_e4m3_t": cutlass.Float8E4M3FN, "tfloat32_t": cutlass.TFloat32}
    out: dict[str, str] = {}

    @cute.jit
    def trace():
        for major in ("K", "MN"):
            for kind in ("INTER", "SW32", "SW64", "SW128"):
                for name, t in types.items():
                    atom = warpgroup.make_smem_layout_atom(
                        getattr(warpgroup.SmemLayoutAtomKind, f"{major}_{kind}"), t
                    )
                    out[f"Layout_{major}_{kind}_Atom<{name}>"] = str(atom)

    trace()
    return out


def umma_atoms() -> dict[str, str]:
    """``UMMA::Layout_*_Atom<T>`` (C++ spelling) -> the DSL's print of
    ``tcgen05.make_smem_layout_atom`` for f16, fp8 and tf32 (the GMMA kinds and MN_SW128_32B)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import tcgen05

    types = {"half_t": cutlass.Float16, "float_e4m3_t": cutlass.Float8E4M3FN, "tfloat32_t": cutlass.TFloat32}
    kinds = [k for k in dir(tcgen05.SmemLayoutAtomKind) if k[0] in "KM" and "_" in k]
    out: dict[str, str] = {}

    @cute.jit
    def trace():
        for kind in kinds:
            for name, t in types.items():
                atom = tcgen05.make_smem_layout_atom(getattr(tcgen05.SmemLayoutAtomKind, kind), t)
                out[f"Layout_{kind}_Atom<{name}>"] = str(atom)

    trace()
    return out


def epilogue_cases() -> list[dict]:
    """Epilogue copies ``make_tiled_copy_S(atom, make_tiled_copy_C_atom(atom, tiled_mma))``: SM90
    GMMA accumulators through stmatrix (plain and transposed, x1/x2/x4) and SM80 mma.sync ones
    through 32-bit universal copies, each with the DSL's source TV layout and by-mode tiler."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import OperandMajorMode, warp, warpgroup

    f16, f32 = cutlass.Float16, cutlass.Float32
    cases: list[dict] = []
    for n in (64, 128, 256):
        for trans in (False, True):
            for mats in (1, 2, 4):
                copy = f"SM90_U16x{2 * mats}_STSM_T" if trans else f"SM90_U32x{mats}_STSM_N"
                cases.append({"atom": f"SM90_64x{n}x16_F16F16F16_SS", "warps": "(1,1,1)", "copy": copy,
                              "n": n, "trans": trans, "mats": mats})  # fmt: skip
    for warps in ((2, 2, 1), (4, 1, 1), (1, 4, 1)):
        cases.append({"atom": "SM80_16x8x16_F32F16F16F32_TN", "warps": str(warps).replace(" ", ""),
                      "copy": "UniversalCopy<uint32_t>", "sm80": warps})  # fmt: skip

    sm90 = [c for c in cases if "n" in c]
    sm80 = [c for c in cases if "sm80" in c]

    def record(c: dict, atom, tm) -> None:
        s = cute.make_tiled_copy_S(atom, cute.make_tiled_copy_C_atom(atom, tm))
        c["tv"] = str(s.layout_src_tv_tiled)
        c["tiler"] = [str(m) for m in s.tiler_mn]

    @cute.jit
    def trace():
        for c in sm90:
            op = warpgroup.MmaF16BF16Op(f16, f16, (64, c["n"], 16), warpgroup.OperandSource.SMEM,
                                        OperandMajorMode.K, OperandMajorMode.K)  # fmt: skip
            record(
                c,
                cute.make_copy_atom(warp.StMatrix8x8x16bOp(c["trans"], c["mats"]), f16),
                cute.make_tiled_mma(op),
            )
        for c in sm80:
            tm = cute.make_tiled_mma(warp.MmaF16BF16Op(f16, f32, (16, 8, 16)), cute.make_layout(c["sm80"]))
            record(c, cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), f16, num_bits_per_copy=32), tm)

    trace()
    for c in cases:
        for k in ("n", "trans", "mats", "sm80"):
            c.pop(k, None)
    return cases


def _perm_text(rng: random.Random, n: int) -> tuple[str, object]:
    """A random permutation of ``0..n-1`` as a CuTe layout: ``n`` split into power-of-two modes
    whose compact strides are taken in a shuffled order (C++ text, DSL value)."""
    sizes = []
    left = n
    while left > 1:
        f = 1 << rng.randint(1, max(1, left.bit_length() - 1))
        sizes.append(min(f, left))
        left //= sizes[-1]
    order = list(range(len(sizes)))
    rng.shuffle(order)
    strides = [0] * len(sizes)
    acc = 1
    for i in order:
        strides[i] = acc
        acc *= sizes[i]
    text = f"Layout<Shape<{','.join(f'_{x}' for x in sizes)}>,Stride<{','.join(f'_{x}' for x in strides)}>>"
    return text, (tuple(sizes), tuple(strides))


def tiled_mma_cases(seed: int = SEED, n: int = CASES) -> list[dict]:
    """Random ``make_tiled_mma(atom, AtomLayoutMNK, Tile<...>)``: the DSL's ``tv_layout_{A,B,C}_tiled``
    with the C++ spelling of what was built (warp tilings, extended and permuted tiles)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import OperandMajorMode, warp, warpgroup

    f16, bf16, f32 = cutlass.Float16, cutlass.BFloat16, cutlass.Float32
    e4m3, i8, k_major = cutlass.Float8E4M3FN, cutlass.Int8, OperandMajorMode.K
    rs, ss = warpgroup.OperandSource.RMEM, warpgroup.OperandSource.SMEM
    atoms = {
        "SM80_16x8x16_F32F16F16F32_TN": (lambda: warp.MmaF16BF16Op(f16, f32, (16, 8, 16)), (16, 8, 16)),
        "SM80_16x8x8_F16F16F16F16_TN": (lambda: warp.MmaF16BF16Op(f16, f16, (16, 8, 8)), (16, 8, 8)),
        "SM80_16x8x16_F32BF16BF16F32_TN": (lambda: warp.MmaF16BF16Op(bf16, f32, (16, 8, 16)), (16, 8, 16)),
        "SM80_16x8x8_F32TF32TF32F32_TN": (lambda: warp.MmaTF32Op((16, 8, 8)), (16, 8, 8)),
        "SM80_16x8x4_F32TF32TF32F32_TN": (lambda: warp.MmaTF32Op((16, 8, 4)), (16, 8, 4)),
        "SM89_16x8x32_F32E4M3E4M3F32_TN": (lambda: warp.MmaFP8Op(e4m3, f32, (16, 8, 32)), (16, 8, 32)),
    }
    for nn in (64, 128):
        atoms[f"SM90_64x{nn}x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::K>"] = (
            lambda nn=nn: warpgroup.MmaF16BF16Op(f16, f32, (64, nn, 16), rs, k_major, k_major),
            (64, nn, 16),
        )
        atoms[f"SM90_64x{nn}x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"] = (
            lambda nn=nn: warpgroup.MmaF16BF16Op(f16, f32, (64, nn, 16), ss, k_major, k_major),
            (64, nn, 16),
        )
    atoms["SM90_64x64x32_S32S8S8_RS_TN"] = (
        lambda: warpgroup.MmaI8Op(i8, i8, cutlass.Int32, (64, 64, 32), rs, k_major, k_major),
        (64, 64, 32),
    )
    atoms["SM90_64x64x32_F32E4M3E4M3_RS_TN"] = (
        lambda: warpgroup.MmaF8Op(e4m3, e4m3, f32, (64, 64, 32), rs, k_major, k_major),
        (64, 64, 32),
    )
    rng = random.Random(seed)
    plans = []
    for _ in range(n):
        name = rng.choice(sorted(atoms))
        mnk = atoms[name][1]
        total = rng.choice([1, 2, 4] if name.startswith("SM90") else [1, 2, 4, 8])
        wm = rng.choice([x for x in (1, 2, 4, 8) if total % x == 0])
        wn = total // wm
        shape = (wm, wn, 1)
        right = rng.random() < 0.5
        strides = (wn, 1, 0) if right else (1, wm, 0)
        tile = []
        for d, w in enumerate((wm, wn, 1)):
            base = mnk[d] * w
            r = rng.random()
            if r < 0.3:
                tile.append(("_", None))
            elif r < 0.7:
                k = base * rng.choice([1, 2, 4]) if base <= 128 else base
                tile.append((f"_{k}", k))
            else:
                k = base * rng.choice([1, 2]) if base <= 128 else base
                tile.append(_perm_text(rng, k))
        plans.append((name, shape, strides, tile))
    out: list[dict] = []

    @cute.jit
    def trace():
        for name, shape, strides, tile in plans:
            op = atoms[name][0]()
            tm = cute.make_tiled_mma(op, cute.make_layout(shape, stride=strides),
                                     permutation_mnk=tuple(_dsl(v) for _, v in tile))  # fmt: skip
            ss_atom = "_SS" in name
            out.append({
                "atom": name,
                "warps": f"Layout<Shape<{','.join(f'_{x}' for x in shape)}>,"
                         f"Stride<{','.join(f'_{x}' for x in strides)}>>",
                "tile": f"Tile<{','.join(t for t, _ in tile)}>",
                "A": None if ss_atom else str(tm.tv_layout_A_tiled),
                "B": None if name.startswith("SM90") else str(tm.tv_layout_B_tiled),
                "C": str(tm.tv_layout_C_tiled),
            })  # fmt: skip

    def _dsl(v):
        return cute.make_layout(v[0], stride=v[1]) if isinstance(v, tuple) else v

    trace()
    return out


def main(argv: list[str]) -> int:
    from importlib.metadata import version

    table = {"dsl": f"nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}", "atoms": atoms(),
             "gmma_layout_atoms": gmma_atoms(), "umma_layout_atoms": umma_atoms(),
             "epilogue_copies": epilogue_cases(), "tiled_mma_seed": SEED,
             "tiled_mmas": tiled_mma_cases()}  # fmt: skip
    with open(argv[0], "w") as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")
    print(f"{len(table['atoms'])} atoms, {len(table['tiled_mmas'])} tiled MMAs from {table['dsl']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
