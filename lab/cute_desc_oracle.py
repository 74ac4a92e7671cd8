"""The CuTe DSL as the oracle of bankproof's descriptor derivation: for every tcgen05 shared-memory
layout atom kind (K/MN-major, interleave and every swizzle) and element width, tile the atom to a few
tile shapes (``tile_to_shape``, MN first, as CUTLASS does), put it at a few shared addresses, and let
the DSL's ``make_umma_smem_desc`` (CUTLASS ``make_umma_desc``) build the 64-bit descriptor. The DSL
folds it to a constant on the CPU; the PTX it keeps holds the value. Writes a JSON table that
``tests/test_engines_cute_oracle.py`` holds bankproof to (the tile's layout as the DSL prints it, the
swizzle, the address, the descriptor).

    python -m lab.cute_desc_oracle tests/data/cute_umma_desc_dsl.json   # with nvidia-cutlass-dsl installed

The DSL exposes no sm90 ``make_gmma_desc``; its canonical layouts and LBO/SBO rules are the same as
``make_umma_desc``'s (CUTLASS ``mma_sm90_desc.hpp`` / ``mma_sm100_desc.hpp``), only the layout-type
codes differ, which ``tests/test_engines_descriptors.py`` checks.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile

os.environ["CUTE_DSL_ARCH"] = "sm_100a"  # its own process (tcgen05 exists on sm_100a only)
os.environ.setdefault("CUTE_DSL_KEEP", "ptx")
os.environ.setdefault("CUTE_DSL_DUMP_DIR", tempfile.mkdtemp())
try:  # the DSL compiles kernels from their source in this module's globals
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import tcgen05
except ImportError:  # only the oracle run needs it
    cutlass = cute = tcgen05 = None
KINDS = [
    "K_INTER",
    "K_SW32",
    "K_SW64",
    "K_SW128",
    "MN_INTER",
    "MN_SW32",
    "MN_SW64",
    "MN_SW128",
    "MN_SW128_32B",
]
DTYPES = {"f16": "Float16", "tf32": "TFloat32", "e4m3": "Float8E4M3FN"}
ADDRESSES = (1024, 3072)


def cases() -> list[dict]:
    out = []
    for kind in KINDS:
        for dt in DTYPES:
            for tiles in ((1, 1), (2, 2), (4, 1)):
                out.append({"kind": kind, "dtype": dt, "tiles": tiles})
    return out


INFO: dict = {}
DTYPE_ORDER = list(DTYPES)


if cute is not None:

    @cute.kernel
    def _kernel(out: cute.Tensor, kind: cutlass.Constexpr, dtype: cutlass.Constexpr, t0: cutlass.Constexpr,
                t1: cutlass.Constexpr, addr: cutlass.Constexpr):  # fmt: skip
        dt = getattr(cutlass, DTYPES[DTYPE_ORDER[dtype]])
        name = KINDS[kind]
        atom = tcgen05.make_smem_layout_atom(getattr(tcgen05.SmemLayoutAtomKind, name), dt)
        shape = (cute.size(atom.outer, mode=[0]) * t0, cute.size(atom.outer, mode=[1]) * t1)
        tiled = cute.tile_to_shape(atom, shape, (0, 1))
        lay = cute.append(cute.group_modes(tiled, 0, 2), cute.make_layout(1))
        ptr = cute.make_ptr(dt, addr, cute.AddressSpace.smem, assumed_align=1024)
        sptr = cute.recast_ptr(ptr, tiled.inner, dtype=dt)
        major = "k" if name.startswith("K") else "mn"
        out[0] = tcgen05.smem_descriptor_to_int(tcgen05.make_umma_smem_desc(sptr, lay.outer, major))
        INFO.update(layout=str(tiled.outer), swizzle=str(tiled.inner), shape=[int(v) for v in shape])

    @cute.jit
    def _host(out: cute.Tensor, kind: cutlass.Constexpr, dtype: cutlass.Constexpr, t0: cutlass.Constexpr,
              t1: cutlass.Constexpr, addr: cutlass.Constexpr):  # fmt: skip
        _kernel(out, kind, dtype, t0, t1, addr).launch(grid=(1, 1, 1), block=(32, 1, 1))


def one(kind: int, dtype: int, t0: int, t1: int, addr: int) -> dict:
    """One descriptor (run in its own process: the DSL aborts the process on some combinations)."""
    import numpy as np
    from cutlass.cute.runtime import from_dlpack

    os.makedirs(os.environ["CUTE_DSL_DUMP_DIR"], exist_ok=True)
    compiled = cute.compile(_host, from_dlpack(np.zeros(4, dtype=np.int64)), kind, dtype, t0, t1, addr)
    ptx = compiled.artifacts.PTX
    if os.path.exists(ptx):
        with open(ptx) as fh:
            ptx = fh.read()
    m = re.search(r"st\.global\.b64\s+\[[^\]]+\],\s*(-?\d+);", ptx)
    return {**INFO, "descriptor": None if m is None else hex(int(m.group(1)) % (1 << 64))}


def run(path: str) -> None:
    import subprocess

    results = []
    for case in cases():
        for addr in ADDRESSES:
            args = [KINDS.index(case["kind"]), DTYPE_ORDER.index(case["dtype"]), *case["tiles"], addr]
            p = subprocess.run([sys.executable, "-m", "lab.cute_desc_oracle", "one", *map(str, args)],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
            line = next((ln for ln in p.stdout.splitlines() if ln.startswith("{")), None)
            got = json.loads(line) if line else {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:300]}
            results.append({**case, "address": addr, **got})
    from importlib.metadata import version

    table = {"dsl": f"nvidia-cutlass-dsl {version('nvidia-cutlass-dsl')}", "cases": results}
    with open(path, "w") as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")
    print(f"{len(results)} descriptors -> {path}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["one"]:
        try:
            print(json.dumps(one(*map(int, sys.argv[2:7]))))
        except Exception as e:  # noqa: BLE001 - the DSL refusing a combination is an answer too
            print(json.dumps({**INFO, "error": (str(e).strip() or repr(e)).splitlines()[0][:300]}))
    else:
        run(sys.argv[1] if len(sys.argv) > 1 else "cute_umma_desc_dsl.json")
