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
import sys


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
                    atom = warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, f"{major}_{kind}"), t)
                    out[f"Layout_{major}_{kind}_Atom<{name}>"] = str(atom)

    trace()
    return out


def main(argv: list[str]) -> int:
    from importlib.metadata import version

    table = {"dsl": f"nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}", "atoms": atoms(),
             "gmma_layout_atoms": gmma_atoms()}  # fmt: skip
    with open(argv[0], "w") as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")
    print(f"{len(table['atoms'])} atoms from {table['dsl']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
