"""The layouts `synth` finds by searching instructions, next to the ones it found before (one
common vector), run whole on the GPU: every element checked and the wavefronts counted by Nsight
Compute against the prediction. Plans here (no GPU), runs on the device:

    python -m lab.gpu.synth_optima_gpu PLAN.json
    ncu --csv --page raw --metrics $(python -m bankproof.gpu_checks.layout_runs metrics) \\
        python -m bankproof.gpu_checks.layout_runs run PLAN.json OUT.npz > NCU.csv
    python -m bankproof.gpu_checks.layout_runs collect PLAN.json OUT.npz NCU.csv RESULTS.json

Cases: Triton 3.9.0's SwizzleTest transposes (f16, bf16, fp8 128x128) and an mma-operand round
trip (64x64 f16 blocked -> dot operand); for each, the chosen pair, the runners-up with other
instructions, and §5.4 with the common vector.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.gpu_checks.layout_cases import case_from_layouts
from bankproof.models.space import Space
from bankproof.models.swizzle import vectorization
from bankproof.verifier.api.spec_file import load_spec
from bankproof.verifier.engine.choice import pick_pair, search

ROOT = Path(__file__).resolve().parents[2]
F8 = {"register": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0]],
      "lane": [[0, 16], [0, 32], [0, 64], [4, 0], [8, 0]], "warp": [[16, 0], [32, 0], [64, 0]]}  # fmt: skip
MMA_PAIR = (
    'shape = [64, 64]\ndtype = "f16"\n[[access]]\nname = "store"\nkind = "store"\n'
    'layout.triton = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], '
    'order = [1, 0]}>"\n[[access]]\nname = "read"\nkind = "load"\nlayout.triton = "#ttg.dot_op<{opIdx = 0, '
    "parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], "
    'instrShape = [16, 8]}>, kWidth = 2}>"\n'
)


def _blocked(spt, tpw, wpc, order) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")  # fmt: skip


def _dot(op: int, k: int) -> str:
    return (f"#ttg.dot_op<{{opIdx = {op}, parent = #ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, "
            f"warpsPerCTA = [4, 1], instrShape = [16, 8]}}>, kWidth = {k}}}>")  # fmt: skip


def _pair(shape: list[int], dtype: str, store: str, load: str) -> str:
    head = f'shape = {shape}\ndtype = "{dtype}"\narch = "sm90"\n'
    return (head + f'[[access]]\nname = "store"\nkind = "store"\nlayout.triton = "{store}"\n'
            f'[[access]]\nname = "read"\nkind = "load"\nlayout.triton = "{load}"\n')  # fmt: skip


ROWS_I8, COLS_I8 = _blocked([1, 16], [16, 2], [4, 1], [1, 0]), _blocked([16, 1], [2, 16], [1, 4], [0, 1])
MORE = {  # where the searched optimum differs from §5.4 with the common vector (timed on the GPU)
    "transpose_64x64_fp8_16x2": _pair([64, 64], "i8", ROWS_I8, COLS_I8),
    "transpose_128x64_fp8_16x2": _pair([128, 64], "i8", ROWS_I8, COLS_I8),
    "mma_a_colmajor_64x64_bf16": _pair(
        [64, 64], "bf16", _blocked([8, 1], [8, 4], [1, 4], [0, 1]), _dot(0, 2)
    ),  # fmt: skip
    "mma_a_64x64_fp8": _pair([64, 64], "i8", _blocked([1, 16], [8, 4], [4, 1], [1, 0]), _dot(0, 4)),
}
# a random pair (bench/synth_vs_z3.py) where a 32-bit writer fills the 16-byte rows ldmatrix.trans
# reads: the search built it as if the writer moved whole rows (96 wavefronts) until each side's
# phases followed its own width (64, Z3's optimum)
NARROW = ({"lane": [[8, 0], [1, 0], [0, 8], [0, 16], [4, 0]], "warp": [[32, 0], [0, 1], [0, 4]],
           "register": [[2, 0], [16, 0], [0, 2]]},
          {"lane": [[0, 8], [16, 0], [0, 2], [8, 0], [1, 0]], "warp": [[2, 0], [0, 4], [4, 0]],
           "register": [[0, 16], [0, 1], [32, 0]]})  # fmt: skip


def _bases(b: dict) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in b.items()) + " }"


def specs(tmp: Path) -> dict[str, Path]:
    f16 = (ROOT / "tests" / "data" / "triton_transpose_128x128_f16.toml").read_text()
    t = {k: [[y, x] for x, y in v] for k, v in F8.items()}
    texts = {
        "transpose_128x128_f16": f16,
        "transpose_128x128_bf16": f16.replace('dtype = "f16"', 'dtype = "bf16"'),
        "transpose_128x128_fp8": f'shape = [128, 128]\ndtype = "i8"\narch = "sm90"\n[[access]]\n'
        f'name = "write"\nkind = "store"\nlayout.bases = {_bases(F8)}\n[[access]]\nname = "read"\n'
        f'kind = "load"\nlayout.bases = {_bases(t)}\n',
        "mma_roundtrip_64x64_f16": MMA_PAIR,
        "transpose_16x32_f32_seed": (ROOT / "examples" / "transpose_16x32_plain.toml").read_text(),
        **MORE,
        "narrow_writer_64x32_f16": 'shape = [64, 32]\ndtype = "f16"\narch = "sm90"\n[[access]]\n'
        f'name = "store"\nkind = "store"\nlayout.bases = {_bases(NARROW[0])}\n[[access]]\nname = "read"\n'
        f'kind = "load"\nlayout.bases = {_bases(NARROW[1])}\n',
    }
    out = {}
    for name, text in texts.items():
        out[name] = tmp / f"{name}.toml"
        out[name].write_text(text)
    return out


def plan(out_path: str) -> list[dict]:
    import tempfile

    cases = []
    with tempfile.TemporaryDirectory() as d:
        for name, path in specs(Path(d)).items():
            spec = load_spec(path, require_memory=False)
            w, r = pick_pair(spec)
            ranked = search(spec, exhaustive=True)
            a, b = w.layout, r.layout.transpose_outs(w.layout.out_dim_names)
            common = tuple(vectorization(a, b, Space.of(a), spec.elem_bits))
            picks = {"chosen": ranked[0]}
            other = next((c for c in ranked if c.instructions != ranked[0].instructions), None)
            if other is not None:
                picks["other instructions"] = other
            picks["§5.4 common vector"] = next(c for c in ranked if c.vector == common)
            padded = [c for c in ranked if c.total > ranked[0].total and c not in picks.values()]
            if padded:
                picks["next cost"] = min(padded, key=lambda c: c.key)
            for label, c in picks.items():
                case = case_from_layouts(f"{name}: {label} {'+'.join(c.instructions)}", w.layout, r.layout,
                                         c.construction.layout, spec.elem_bits, *c.instructions)  # fmt: skip
                cases.append(case)
    with open(out_path, "w") as fh:
        json.dump(cases, fh)
    for c in cases:
        print(f"{c['id']}: predicted {c['store']['predicted']} + {c['load']['predicted']}")
    return cases


if __name__ == "__main__":
    plan(sys.argv[1])
