"""Spec files for the GPU runs of constrained synthesis: for each ``examples/synth/*.toml`` (and
the seeds' transpose weighed against padded layouts), one verify spec per layout of the family, one for the unconstrained optimum, and (the CUTLASS
epilogue) one for CUTLASS's own SW128 atom, each with the accesses as bases and the instructions
the synthesis counted; a spec with only a store gets a row reader (``check``) so every element is
read back. Run on the device by ``device_constrained.sh``; the results are replayed by
``tests/test_constrained_synth.py``.

    python -m lab.gpu.constrained_specs OUTDIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bankproof.verifier.api.spec_file import load_spec

import bankproof

ROOT = Path(__file__).resolve().parents[2]
ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
CUTLASS_SW128_F32 = "tile_to_shape(GMMA::Layout_K_SW128_Atom<float>{}, make_shape(Int<64>{}, Int<32>{}))"


def _toml(value) -> str:
    return json.dumps(value)  # JSON strings, lists and numbers are TOML too


def spec_text(spec, memory: str, instrs: dict[str, str], checker: bool) -> str:
    """A verify spec: ``memory`` a [memory] line, the accesses as bases with their instructions."""
    lines = [f"shape = {_toml(spec.shape)}", f"dtype = {_toml(spec.dtype)}", f"arch = {_toml(spec.arch)}",
             f"dims = {_toml(spec.dims)}", "[memory]", memory]  # fmt: skip
    for a in spec.accesses:
        bases = "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in a.layout.as_dict().items()) + "}"
        lines += ["[[access]]", f"name = {_toml(a.name)}", f"kind = {_toml(a.kind)}",
                  f"instr = {_toml(instrs.get(a.name, a.instr))}", f"layout.bases = {bases}"]  # fmt: skip
    if checker:
        lines += ["[[access]]", 'name = "check"', 'kind = "load"', f"layout.triton = {_toml(ROWS)}"]
    return "\n".join(lines) + "\n"


PADDED = [ROOT / "examples" / "transpose_16x32_plain.toml"]  # weighed against padded layouts (--padded)


def _memory(m) -> str:
    """A member's [memory] line: its bases, or (padded) its CuTe strides."""
    if m.costs and m.costs.get("pad_terms"):
        return f"cute = {_toml(m.layout)}"
    return f"offset_bases = {_toml(list(map(list, m.offset)))}"


def main(out: str) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "examples" / "synth").glob("*.toml")) + PADDED:
        spec = load_spec(path, require_memory=False)
        r = bankproof.synth(spec=str(path), padded=path in PADDED)
        checker = not any(a.kind == "load" for a in spec.accesses)
        runs = {f"member{i}": (_memory(m), m.instructions or {}) for i, m in enumerate(r.constrained.members)}
        runs["unconstrained"] = (
            f"offset_bases = {_toml(r.layout.as_dict()['offset'])}",
            {a.name: a.instr for a in r.accesses},
        )
        if path.stem.startswith("cutlass_sm90_epilogue_f32"):
            runs["cutlass"] = (f"cute = {_toml(CUTLASS_SW128_F32)}", {})
        for name, (memory, instrs) in runs.items():
            (folder / f"{path.stem}__{name}.toml").write_text(spec_text(spec, memory, instrs, checker))


if __name__ == "__main__":
    main(sys.argv[1])
