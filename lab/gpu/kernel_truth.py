"""GPU truth for ``bankproof kernel``: the CUDA examples (examples/cuda/cases.toml) compiled here by
NVRTC, the same PTX built on the device by ptxas, launched once each (one CTA, the cases'
arguments; pointer arguments get zeroed buffers, or the case's ``data`` copied in; tensor maps are
encoded for TMA), measured with
Nsight Compute (SASS-level counters and the SourceCounters source view), and packed into one record.

    python -m lab.gpu.kernel_truth prepare lab/gpu/truth        # here: PTX + plan.json
    lab/gpu/device_kernel_truth.sh lab/gpu/truth $OUT           # on the device
"""

from __future__ import annotations

import ctypes
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

METRICS = [
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "sm__sass_inst_executed_op_ldsm.sum", "sm__sass_inst_executed_op_shared_stsm.sum",
    "sm__sass_inst_executed_op_ldgsts.sum", "smsp__sass_inst_executed_op_shared_atom.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "launch__grid_size", "launch__block_size",
]  # fmt: skip


def prepare(folder: str, cases_folder: str = "examples/cuda") -> None:
    """Compile every case of ``cases_folder``/cases.toml here (NVRTC; PTX sources as written), write
    its PTX and the plan the device launches. Arguments and buffers may name a parameter by its
    position (``"4"``: numba's array fields)."""
    import tomllib
    from bankproof.verifier.api.kernel import read_source

    root = Path(cases_folder)
    cases = tomllib.loads((root / "cases.toml").read_text())["case"]
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    for c in cases:
        src, names = read_source(root / c["source"], c.get("kernel", c["name"]), defines=c.get("defines", {}))
        (out / f"{c['name']}.ptx").write_text(src.module.text)
        prebuilt = None
        version = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", src.module.text, re.M)
        if version and (int(version[1]), int(version[2])) > (9, 0):  # newer than the device's ptxas reads
            prebuilt = f"{c['name']}.cubin"
            subprocess.run([_ptxas(), "-arch=sm_90a", "-lineinfo", "-o", str(out / prebuilt),
                            str(out / f"{c['name']}.ptx")], check=True)  # fmt: skip
        pos = {v: k for k, v in names.items()}
        given = {*c.get("args", {}), *c.get("buffers", {}), *c.get("tensor_maps", {})}
        missing = (
            given
            - set(names)
            - {n for _, n in src.code.params}
            - {str(i) for i in range(len(src.code.params))}
        )
        if missing:
            raise SystemExit(f"{c['name']}: {sorted(missing)} name no parameter ({sorted(names)})")
        params = []
        for i, (ptype, pname) in enumerate(src.code.params):
            cname = pos.get(i, pname)
            cname = str(i) if str(i) in given else cname
            if cname in c.get("buffers", {}):
                params.append({"kind": "buffer", "bytes": c["buffers"][cname]})
                if cname in c.get("data", {}):  # what it holds at launch (zeros after it)
                    from tests.kernel_cases import buffers_of

                    data = f"{c['name']}.{cname}.bin"
                    (out / data).write_bytes(buffers_of(c)[cname].tobytes())
                    params[-1]["data"] = data
            elif cname in c.get("tensor_maps", {}):
                params.append({"kind": "tensor_map", **c["tensor_maps"][cname]})
            else:
                params.append({"kind": "value", "type": ptype, "value": c.get("args", {}).get(cname, 0)})
        block = c["block"] if isinstance(c["block"], list) else [c["block"]]
        plan.append({"name": c["name"], "kernel": src.code.name, "ptx": f"{c['name']}.ptx", "cubin": prebuilt,
                     "block": block + [1] * (3 - len(block)), "dynamic_smem": c.get("dynamic_smem", 0),
                     "params": params})  # fmt: skip
    (out / "plan.json").write_text(json.dumps(plan, indent=1))
    print(f"{len(plan)} cases prepared in {out}")


def _ptxas() -> str:
    """Triton's bundled ptxas (CUDA 13.4: reads Triton 3.9's PTX ISA 9.4), else the one on PATH."""
    try:
        import triton

        path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    return "ptxas"


# ----- the device side: the driver API through ctypes (no CuPy needed) ------------------------------
def _cuda():
    lib = ctypes.CDLL("libcuda.so.1")

    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed: CUresult {rc}")

    return lib, check


def launch(folder: str, only: list[str] | None = None) -> None:
    """Build each case's PTX with ptxas and launch it once (one CTA); ``only``: these cases."""
    lib, check = _cuda()
    plan = [c for c in json.loads((Path(folder) / "plan.json").read_text()) if not only or c["name"] in only]
    check(lib.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
    check(lib.cuCtxSetCurrent(ctx), "set ctx")
    for case in plan:
        ptx = Path(folder) / case["ptx"]
        cubin = ptx.with_suffix(".cubin")
        if not case.get("cubin"):
            subprocess.run(["ptxas", "-arch=sm_90a", "-lineinfo", "-o", str(cubin), str(ptx)], check=True)
        mod = ctypes.c_void_p()
        data = cubin.read_bytes()
        check(lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data)), "load " + case["name"])
        fn = ctypes.c_void_p()
        check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, case["kernel"].encode()), "function")
        if case["dynamic_smem"] > 48 * 1024:
            check(
                lib.cuFuncSetAttribute(fn, 8, case["dynamic_smem"]), "max dynamic smem"
            )  # MAX_DYNAMIC_SHARED
        holders = []
        for p in case["params"]:
            holders.append(_param(lib, check, p))
            if p.get("data"):  # the launch's data, copied in
                raw = (Path(folder) / p["data"]).read_bytes()
                check(
                    lib.cuMemcpyHtoD_v2(holders[-1], ctypes.c_char_p(raw), ctypes.c_size_t(len(raw))), "copy"
                )
        ptrs = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders]
        )
        bx, by, bz = case["block"]
        check(
            lib.cuLaunchKernel(fn, 1, 1, 1, bx, by, bz, case["dynamic_smem"], None, ptrs, None), case["name"]
        )
        check(lib.cuCtxSynchronize(), "sync " + case["name"])
        print("launched", case["name"], flush=True)


def _param(lib, check, p):
    if p["kind"] == "buffer":
        ptr = ctypes.c_uint64()
        check(lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(p["bytes"])), "alloc")
        check(lib.cuMemsetD8_v2(ptr, 0, ctypes.c_size_t(p["bytes"])), "memset")
        return ptr
    if p["kind"] == "tensor_map":  # bf16 rows x cols, row-major, box [rows, cols], swizzle 128B
        rows, cols = p["rows"], p["cols"]
        ptr = ctypes.c_uint64()
        check(lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(rows * cols * 2)), "alloc")
        check(lib.cuMemsetD8_v2(ptr, 0, ctypes.c_size_t(rows * cols * 2)), "memset")
        tmap = (ctypes.c_uint64 * 16)()
        dims = (ctypes.c_uint64 * 2)(cols, rows)
        strides = (ctypes.c_uint64 * 1)(cols * 2)
        box = (ctypes.c_uint32 * 2)(p["box"][1], p["box"][0])
        estr = (ctypes.c_uint32 * 2)(1, 1)
        check(
            lib.cuTensorMapEncodeTiled(
                tmap, 9, 2, ctypes.c_void_p(ptr.value), dims, strides, box, estr, 0, 3, 0, 0
            ),
            "tensor map",
        )  # bf16, no interleave, 128B, no promotion
        return tmap
    t, v = p["type"], int(p["value"])
    fmt = {"u32": "<I", "s32": "<i", "b32": "<I", "f32": "<I", "u64": "<Q", "s64": "<q", "b64": "<Q",
           "f64": "<Q", "u16": "<H", "s16": "<h", "u8": "<B"}.get(t, "<I")  # fmt: skip
    raw = struct.pack(fmt, v & ((1 << (8 * struct.calcsize(fmt))) - 1) if fmt.isupper() or v >= 0 else v)
    return (ctypes.c_uint8 * len(raw)).from_buffer_copy(raw)


def _rows(ncu_rep: str) -> list[dict]:
    import csv
    import io

    raw = subprocess.run(["ncu", "-i", ncu_rep, "--csv", "--page", "raw", "--metrics", ",".join(METRICS)],
                         capture_output=True, text=True).stdout  # fmt: skip
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(x for x in raw.splitlines() if x.startswith('"'))))
            if r.get("ID", "").isdigit()]  # fmt: skip
    rows.sort(key=lambda r: int(r["ID"]))
    return rows


def pack(folder: str, reports: str, out: str) -> None:
    """One record: per case its PTX, SASS, the launch's metrics and its source view (CSV); one ncu
    report per case (``reports``/NAME.ncu-rep); a case whose report is missing is recorded as failed."""
    plan = json.loads((Path(folder) / "plan.json").read_text())
    env = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    ver = (
        subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    )
    records = []
    for case in plan:
        ncu_rep = str(Path(reports) / f"{case['name']}.ncu-rep")
        rows = _rows(ncu_rep) if Path(ncu_rep).exists() else []
        if not rows:
            records.append({**case, "failed": True})
            continue
        row = rows[0]
        src = subprocess.run(["ncu", "-i", ncu_rep, "--page", "source", "--csv", "--print-source", "cuda,sass",
                              "--launch-skip", row["ID"], "--launch-count", "1"], capture_output=True, text=True)  # fmt: skip
        sass = subprocess.run(["cuobjdump", "-sass", str(Path(folder) / (case["name"] + ".cubin"))],
                              capture_output=True, text=True).stdout  # fmt: skip
        metrics = {m: row.get(m) for m in METRICS}
        records.append({**case, "ncu_kernel": row.get("Kernel Name"), "metrics": metrics, "source_csv": src.stdout,
                        "ptx_text": (Path(folder) / case["ptx"]).read_text(), "sass": sass})  # fmt: skip
    with open(out, "w") as fh:
        json.dump({"gpu": env, "ncu": ver, "cases": records}, fh)
    print(f"{len(records)} cases packed into {out}")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "prepare":
        prepare(*sys.argv[2:4])
    elif cmd == "launch":
        launch(sys.argv[2], sys.argv[3:])
    elif cmd == "pack":
        pack(sys.argv[2], sys.argv[3], sys.argv[4])
