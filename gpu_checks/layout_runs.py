"""Run whole layouts on the GPU: store a tensor through shared memory with one access, load it
back with another, check every element, and measure the wavefronts with Nsight Compute.

    python -m bankproof.gpu_checks.layout_runs plan PLAN.json [SPEC.toml ...] [--random N] [--matrix] [--wide-matrix] [--stsm-trans]
    ncu --csv --page raw --metrics $(python -m bankproof.gpu_checks.layout_runs metrics) \\
        python -m bankproof.gpu_checks.layout_runs run PLAN.json OUT.npz > NCU.csv
    python -m bankproof.gpu_checks.layout_runs collect PLAN.json OUT.npz NCU.csv RESULTS.json

A plan case holds the layouts (bases), the memory layout, the dtype and both instructions, plus
the enumerated addresses and the element ids each lane stores and expects. The kernel: each warp
issues its store instructions, ``__syncthreads``, then its load instructions, writing what it
loaded to global memory. Values are element ids (row-major flat index) truncated to the element
width; the check compares every loaded element with the id the load layout names.
"""

from __future__ import annotations

import json
import random
import sys

import numpy as np
from bankproof.gpu_checks.kernels import SMEM_BYTES
from bankproof.models.access import build_access, element_offsets
from bankproof.models.errors import InputError
from bankproof.models.hardware import evaluate, instruction
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout

# ncu counts STSM instructions only under this metric (not under ..._op_shared_st).
STSM_INSTRUCTIONS = "sm__sass_inst_executed_op_shared_stsm.sum"
STORE_METRIC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LOAD_METRIC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"


# ----- kernels ---------------------------------------------------------------------------------
def _st(width: int) -> str:
    if width in (1, 2):
        t = "u8" if width == 1 else "u16"
        return (
            f'{{ unsigned short h = (unsigned short)v[0]; asm volatile("st.volatile.shared.{t} [%0], %1;" '
            f':: "r"(a), "h"(h) : "memory"); }}'
        )
    if width == 4:
        return 'asm volatile("st.volatile.shared.b32 [%0], %1;" :: "r"(a), "r"(v[0]) : "memory");'
    if width == 8:
        return (
            'asm volatile("st.volatile.shared.v2.b32 [%0], {%1, %2};" '
            ':: "r"(a), "r"(v[0]), "r"(v[1]) : "memory");'
        )
    return (
        'asm volatile("st.volatile.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(v[0]), "r"(v[1]), '
        '"r"(v[2]), "r"(v[3]) : "memory");'
    )


def _ld(width: int) -> str:
    if width in (1, 2):
        t = "u8" if width == 1 else "u16"
        return (
            f'{{ unsigned short h; asm volatile("ld.volatile.shared.{t} %0, [%1];" : "=h"(h) : "r"(a) : "memory"); '
            f"r[0] = h; }}"
        )
    if width == 4:
        return 'asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(r[0]) : "r"(a) : "memory");'
    if width == 8:
        return (
            'asm volatile("ld.volatile.shared.v2.b32 {%0, %1}, [%2];" '
            ': "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");'
        )
    return (
        'asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), '
        '"=r"(r[3]) : "r"(a) : "memory");'
    )


def _stsm(ins) -> str:
    m, t = ins.matrices, ".trans" if ins.trans else ""
    regs = ", ".join(f"%{k + 1}" for k in range(m))
    vals = ", ".join(f'"r"(v[{k}])' for k in range(m))
    return f'asm volatile("stmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 [%0], {{{regs}}};" :: "r"(a), {vals} : "memory");'


def _ldsm(ins) -> str:
    m, t = ins.matrices, ".trans" if ins.trans else ""
    regs = ", ".join(f"%{k}" for k in range(m))
    outs = ", ".join(f'"=r"(r[{k}])' for k in range(m))
    return f'asm volatile("ldmatrix.sync.aligned.m8n8.x{m}{t}.shared.b16 {{{regs}}}, [%{m}];" : {outs} : "r"(a) : "memory");'


def words_per_lane(ins) -> int:
    """32-bit words of data one lane moves per instruction."""
    return ins.matrices if ins.is_matrix else max(1, ins.width // 4)


def kernel_name(st, ld) -> str:
    return f"k_layout_{st.short.replace('.', '_')}_{ld.short.replace('.', '_')}"


def kernel_source(st, ld) -> str:
    """A store-then-load kernel for two instruction kinds."""
    sw, lw = words_per_lane(st), words_per_lane(ld)
    st_code = _stsm(st) if st.is_matrix else _st(st.width)
    ld_code = _ldsm(ld) if ld.is_matrix else _ld(ld.width)
    return f"""
extern "C" __global__ void {kernel_name(st, ld)}(
    const unsigned* __restrict__ st_addr, const unsigned* __restrict__ st_val, const int* __restrict__ st_first,
    const unsigned* __restrict__ ld_addr, const int* __restrict__ ld_first, unsigned* __restrict__ out) {{
  __shared__ __align__(1024) unsigned char smem[{SMEM_BYTES}];
  unsigned base;
  asm volatile("{{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }}" : "=r"(base) : "l"(smem));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = st_first[warp]; i < st_first[warp + 1]; ++i) {{
    const unsigned a = base + st_addr[i * 32 + lane];
    unsigned v[{sw}];
    for (int k = 0; k < {sw}; ++k) v[k] = st_val[(i * 32 + lane) * {sw} + k];
    {st_code}
  }}
  __syncthreads();
  for (int i = ld_first[warp]; i < ld_first[warp + 1]; ++i) {{
    const unsigned a = base + ld_addr[i * 32 + lane];
    unsigned r[{lw}];
    {ld_code}
    for (int k = 0; k < {lw}; ++k) out[(i * 32 + lane) * {lw} + k] = r[k];
  }}
}}
"""


# ----- plans -----------------------------------------------------------------------------------
def _ids(elements: np.ndarray, shape: list[int]) -> np.ndarray:
    """Row-major flat index of coordinates ``(..., rank)``."""
    out = np.zeros(elements.shape[:-1], dtype=np.int64)
    for d, size in enumerate(shape):
        out = out * size + elements[..., d]
    return out


def _truncate(ids: np.ndarray, elem_bits: int) -> np.ndarray:
    """Ids as stored in elements of ``elem_bits`` (ids are below 2^24, so only narrow types wrap)."""
    return ids & ((1 << elem_bits) - 1) if elem_bits < 32 else ids


def _pack(values: np.ndarray, elem_bits: int) -> np.ndarray:
    """Element values (n, 32, v) -> 32-bit words per lane, little-endian (n, 32, words)."""
    vals = _truncate(values, elem_bits).astype(np.uint64)
    n, lanes, v = vals.shape
    total_bits = v * elem_bits
    words = max(1, total_bits // 32)
    packed = np.zeros((n, lanes, words), dtype=np.uint64)
    for j in range(v):
        bit = j * elem_bits
        packed[..., bit // 32] |= vals[..., j] << np.uint64(bit % 32)
    return (packed & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _unpack(words: np.ndarray, v: int, elem_bits: int) -> np.ndarray:
    w = words.astype(np.uint64)
    out = np.zeros(words.shape[:-1] + (v,), dtype=np.int64)
    for j in range(v):
        bit = j * elem_bits
        out[..., j] = ((w[..., bit // 32] >> np.uint64(bit % 32)) & np.uint64((1 << elem_bits) - 1)).astype(
            np.int64
        )
    return out


def _first(access) -> list[int]:
    nwarps = int(access.warp.max()) + 1
    return [int(np.searchsorted(access.warp, w)) for w in range(nwarps)] + [len(access.warp)]


def case_from_layouts(
    case_id: str,
    store: LinearLayout,
    load: LinearLayout,
    memory: LinearLayout | PaddedLayout,
    elem_bits: int,
    store_instr: str = "auto",
    load_instr: str = "auto",
) -> dict:
    """A plan case: layouts, predictions and the data each lane stores and expects."""
    lin = memory.linear if isinstance(memory, PaddedLayout) else memory
    shape = [s for _, s in lin.out_dims]
    if int(element_offsets(memory).max() + 1) * elem_bits // 8 > SMEM_BYTES:
        raise ValueError("the buffer does not fit in 48 KB of static shared memory")
    st = build_access(store, memory, elem_bits, "store", store_instr)
    ld = build_access(load, memory, elem_bits, "load", load_instr)
    if st.block.max() > 0 or ld.block.max() > 0:
        raise ValueError("one CTA only")
    if int(st.warp.max()) != int(ld.warp.max()):
        raise ValueError("store and load must use the same number of warps")
    st_counts, _, _ = evaluate(st.instr, st.addresses)
    ld_counts, _, _ = evaluate(ld.instr, ld.addresses)
    mem = (
        {"padded": [list(p) for p in memory.intervals], "offset": memory.linear.as_dict()["offset"]}
        if isinstance(memory, PaddedLayout)
        else {"offset": memory.as_dict()["offset"]}
    )
    return {
        "id": case_id,
        "shape": shape,
        "elem_bits": elem_bits,
        "memory": mem,
        "store_layout": store.as_dict(),
        "load_layout": load.as_dict(),
        "store": {
            "instr": st.instr.short,
            "instructions": len(st.addresses),
            "predicted": int(st_counts.sum()),
            "addresses": st.addresses.tolist(),
            "first": _first(st),
            "values": _pack(_ids(st.elements, shape), elem_bits).tolist(),
        },
        "load": {
            "instr": ld.instr.short,
            "instructions": len(ld.addresses),
            "predicted": int(ld_counts.sum()),
            "addresses": ld.addresses.tolist(),
            "first": _first(ld),
            "vector": ld.vector,
            "expect": _truncate(_ids(ld.elements, shape), elem_bits).tolist(),
        },
        "warps": int(st.warp.max()) + 1,
    }


def random_cases(n: int, seed: int = 7) -> list[dict]:
    """Random distributed layout pairs over random or synthesized swizzles, 8- to 64-bit."""
    from bankproof.models.swizzle import optimal_swizzle

    rng = random.Random(seed)
    out = []
    while len(out) < n:
        bits = rng.choice([8, 16, 32, 64])
        total = rng.randint(7, 12)
        rows = rng.randint(1, total - 1)
        shape = [1 << rows, 1 << (total - rows)]
        warp_bits = rng.randint(0, 2)
        store, load = (_random_layout(rng, shape, warp_bits) for _ in range(2))
        if rng.random() < 0.5:
            memory = optimal_swizzle(store, load, bits).layout
            kind = "synthesized"
        else:
            memory = _random_memory(rng, shape)
            kind = "random"
        try:
            out.append(case_from_layouts(f"random{len(out)}-{kind}", store, load, memory, bits))
        except ValueError:
            continue
    return out


KWIDTHS = (1, 2, 4, 8)


def matrix_cases() -> list[dict]:
    """ldmatrix/stmatrix where the layouts allow: mma v2 accumulators stored with stmatrix, dot
    operands A (ldmatrix) and B (ldmatrix.trans) with kWidth 1/2/4/8 loaded from Triton's usual
    swizzles, fp16. A pair the instruction cannot deliver (operand A with kWidth != 2: a lane's
    registers are not the column pair ldmatrix hands it) is left out."""
    from bankproof.models.notation import parse_layout

    out = []
    for shape, warps in (([64, 64], [4, 1]), ([64, 64], [2, 2]), ([32, 64], [1, 1])):
        w = "[" + ", ".join(map(str, warps)) + "]"
        n_warps = warps[0] * warps[1]
        mma = f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {w}, instrShape = [16, 8]}}>"
        lay = {
            "acc": mma,
            **{f"a{k}": f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = {k}}}>" for k in KWIDTHS},
            **{f"b{k}": f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = {k}}}>" for k in KWIDTHS},
            "rows": f"#ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [{n_warps}, 1], "
            "order = [1, 0]}>",
        }
        lays = {k: parse_layout(v, shape).layout for k, v in lay.items()}
        for mem_text in (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
            "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
            "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
        ):
            mem = parse_layout(mem_text, shape).layout
            combos = [
                ("rows", f"a{k}", "auto", m) for k in KWIDTHS for m in ("ldsm.x4", "ldsm.x2", "ldsm.x1")
            ]
            combos += [
                ("rows", f"b{k}", "auto", m) for k in KWIDTHS for m in ("ldsm.x4.trans", "ldsm.x2.trans")
            ]
            combos += [("acc", "rows", m, "auto") for m in ("stsm.x4", "stsm.x2", "stsm.x1")]
            for st_name, ld_name, st_i, ld_i in combos:
                try:
                    out.append(
                        case_from_layouts(
                            f"matrix-{shape[0]}x{shape[1]}-{w}-{st_name}-{ld_name}-{st_i}-{ld_i}"
                            f"-{mem_text[21:60]}",
                            lays[st_name],
                            lays[ld_name],
                            mem,
                            16,
                            st_i,
                            ld_i,
                        )
                    )
                except (ValueError, InputError):
                    continue
    return out


def wide_matrix_cases() -> list[dict]:
    """ldmatrix for 32- and 8-bit dot operands A, as Triton 3.9 loads tf32 (kWidth 1) and 8-bit
    (kWidth 4) operands: each lane takes 4 bytes of a 16-byte row per matrix (1 or 4 elements),
    after a row-wise 128-bit store, over a 16-byte-unit swizzle and no swizzle."""
    from bankproof.models.notation import parse_layout

    out = []
    for bits, kwidth, shape in ((32, 1, [64, 32]), (8, 4, [64, 128])):
        per_thread = 128 // bits  # elements in 16 bytes
        for warps in ([4, 1], [2, 2]):
            w = "[" + ", ".join(map(str, warps)) + "]"
            mma = f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {w}, instrShape = [16, 8]}}>"
            rows = (
                f"#ttg.blocked<{{sizePerThread = [1, {per_thread}], threadsPerWarp = [4, 8], "
                f"warpsPerCTA = [{warps[0] * warps[1]}, 1], order = [1, 0]}}>"
            )
            a = f"#ttg.dot_op<{{opIdx = 0, parent = {mma}, kWidth = {kwidth}}}>"
            store, load = (parse_layout(t, shape).layout for t in (rows, a))
            for phases in (8, 1):
                mem_text = f"#ttg.swizzled_shared<{{vec = {per_thread}, perPhase = 1, maxPhase = {phases}, order = [1, 0]}}>"
                mem = parse_layout(mem_text, shape).layout
                for ld in ("ldsm.x4", "ldsm.x2", "ldsm.x1"):
                    out.append(
                        case_from_layouts(
                            f"matrix{bits}-{shape[0]}x{shape[1]}-{w}-a{kwidth}-{ld}-maxPhase{phases}",
                            store,
                            load,
                            mem,
                            bits,
                            "auto",
                            ld,
                        )  # fmt: skip
                    )
    return out


def stmatrix_trans_cases() -> list[dict]:
    """stmatrix ``.trans`` x1/x2/x4: fp16 registers in Triton's dot operand B layout (kWidth
    1/2/4/8, the fragments ldmatrix.trans delivers) stored transposed, then read back row-wise;
    Triton's usual 128-byte swizzle and none; 1, 4 (4x1 and 2x2) warps."""
    from bankproof.models.notation import parse_layout

    out = []
    for shape, warps in (([64, 64], [4, 1]), ([64, 64], [2, 2]), ([32, 64], [1, 1])):
        w = "[" + ", ".join(map(str, warps)) + "]"
        mma = f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {w}, instrShape = [16, 8]}}>"
        rows = (
            f"#ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [{warps[0] * warps[1]}, 1], "
            "order = [1, 0]}>"
        )
        load = parse_layout(rows, shape).layout
        for k in KWIDTHS:
            store = parse_layout(f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = {k}}}>", shape).layout
            for phases, vec in ((8, 8), (1, 1)):
                mem_text = f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = 1, maxPhase = {phases}, order = [1, 0]}}>"
                mem = parse_layout(mem_text, shape).layout
                for st in ("stsm.x4.trans", "stsm.x2.trans", "stsm.x1.trans"):
                    out.append(
                        case_from_layouts(
                            f"stsm-trans-{shape[0]}x{shape[1]}-{w}-b{k}-{st}-maxPhase{phases}",
                            store,
                            load,
                            mem,
                            16,
                            st,
                            "auto",
                        )  # fmt: skip
                    )
    return out


def _units(shape: list[int]) -> list[list[int]]:
    return [[1 << i, 0] for i in range(shape[0].bit_length() - 1)] + [
        [0, 1 << i] for i in range(shape[1].bit_length() - 1)
    ]


def _random_layout(rng: random.Random, shape: list[int], warp_bits: int) -> LinearLayout:
    units = _units(shape)
    rng.shuffle(units)
    lane = [units.pop() if units and rng.random() < 0.92 else [0, 0] for _ in range(5)]
    warp = [units.pop() if units and rng.random() < 0.85 else [0, 0] for _ in range(warp_bits)]
    return LinearLayout.from_bases(
        {"register": units, "lane": lane, "warp": warp, "block": []}, {"dim0": shape[0], "dim1": shape[1]}
    )


def _random_memory(rng: random.Random, shape: list[int]) -> LinearLayout:
    units = _units(shape)
    rng.shuffle(units)
    bases = [u[:] for u in units]
    for i in range(len(bases)):
        for j in range(i):
            if rng.random() < 0.2:
                bases[i] = [a ^ b for a, b in zip(bases[i], units[j])]
    return LinearLayout.from_bases({"offset": bases}, {"dim0": shape[0], "dim1": shape[1]})


def spec_case(path: str) -> dict:
    from bankproof.verifier.spec import load_spec

    spec = load_spec(path)
    stores = [a for a in spec.accesses if a.kind == "store"]
    loads = [a for a in spec.accesses if a.kind == "load"]
    st, ld = stores[0], loads[0]
    return case_from_layouts(path, st.layout, ld.layout, spec.memory, spec.elem_bits, st.instr, ld.instr)


# ----- running and collecting ------------------------------------------------------------------
def case_kernel(case: dict) -> tuple[str, str, int]:
    """The kernel one planned case runs: (name, CUDA source, 32-bit words each lane loads)."""
    st, ld = instruction(case["store"]["instr"]), instruction(case["load"]["instr"])
    return kernel_name(st, ld), kernel_source(st, ld), words_per_lane(ld)


def run(plan_path: str, out_path: str) -> None:
    import cupy as cp

    with open(plan_path) as fh:
        cases = json.load(fh)
    arch = int(cp.cuda.Device().compute_capability)
    modules: dict = {}
    results = {}
    for c in cases:
        name, source, lw_words = case_kernel(c)
        if name not in modules:
            modules[name] = cp.RawModule(code=source, options=(f"-arch=sm_{arch}",)).get_function(name)
        out = cp.zeros(len(c["load"]["addresses"]) * 32 * lw_words, dtype=cp.uint32)
        args = (
            cp.asarray(np.array(c["store"]["addresses"], dtype=np.uint32)),
            cp.asarray(np.array(c["store"]["values"], dtype=np.uint32)),
            cp.asarray(np.array(c["store"]["first"], dtype=np.int32)),
            cp.asarray(np.array(c["load"]["addresses"], dtype=np.uint32)),
            cp.asarray(np.array(c["load"]["first"], dtype=np.int32)),
            out,
        )
        modules[name]((1,), (32 * c["warps"],), args)
        cp.cuda.Device().synchronize()
        results[c["id"]] = cp.asnumpy(out).reshape(len(c["load"]["addresses"]), 32, lw_words)
    np.savez(out_path, **{str(i): results[c["id"]] for i, c in enumerate(cases)})


def _lane_bytes(ins, addr: np.ndarray, lane: int) -> list[tuple[int, int, int]]:
    """(byte address, data byte offset, length) pieces one lane moves in one instruction."""
    if not ins.is_matrix:
        return [(int(addr[lane]), 0, ins.width)]
    pieces = []
    for j in range(ins.matrices):
        for e in range(2):
            if ins.trans:
                row, col = 2 * (lane % 4) + e, lane // 4
            else:
                row, col = lane // 4, 2 * (lane % 4) + e
            pieces.append((int(addr[8 * j + row]) + 2 * col, 4 * j + 2 * e, 2))
    return pieces


def emulate(case: dict) -> np.ndarray:
    """What the kernel loads, computed on the CPU: the reference for ``run``'s output."""
    buf = np.zeros(SMEM_BYTES + 16, dtype=np.uint8)
    st_ins, ld_ins = instruction(case["store"]["instr"]), instruction(case["load"]["instr"])
    st_addr = np.array(case["store"]["addresses"])
    st_val = np.array(case["store"]["values"], dtype=np.uint32)
    raw = st_val.view(np.uint8).reshape(st_addr.shape + (-1,))
    for i in range(st_addr.shape[0]):
        for lane in range(32):
            for a, off, n in _lane_bytes(st_ins, st_addr[i], lane):
                buf[a : a + n] = raw[i, lane, off : off + n]
    ld_addr = np.array(case["load"]["addresses"])
    words = words_per_lane(ld_ins)
    out = np.zeros(ld_addr.shape + (words * 4,), dtype=np.uint8)
    for i in range(ld_addr.shape[0]):
        for lane in range(32):
            for a, off, n in _lane_bytes(ld_ins, ld_addr[i], lane):
                out[i, lane, off : off + n] = buf[a : a + n]
    return out.view(np.uint32).reshape(ld_addr.shape + (words,))


def check_data(case: dict, words: np.ndarray) -> int:
    """How many loaded elements differ from what the load layout names."""
    got = _unpack(words, case["load"]["vector"], case["elem_bits"])
    return int((got != np.array(case["load"]["expect"])).sum())


def _instructions(row: dict, op: str) -> int:
    """Shared-memory instructions of one direction: ncu counts ``LDS``/``STS`` and ``LDSM``/``STSM``
    under separate metrics; a matrix metric the row lacks counts as zero."""
    from bankproof.gpu_checks.measure import _number

    plain = _number(row[f"smsp__sass_inst_executed_op_shared_{op}.sum"])
    matrix = _number(row.get(STSM_INSTRUCTIONS if op == "st" else "sm__sass_inst_executed_op_ldsm.sum", ""))
    return plain + (matrix or 0)


def collect(plan_path: str, out_path: str, ncu_path: str, results_path: str) -> None:
    from bankproof.gpu_checks.measure import _env, _number, parse_ncu_csv

    with open(plan_path) as fh:
        cases = json.load(fh)
    data = np.load(out_path)
    with open(ncu_path) as fh:
        rows = [r for r in parse_ncu_csv(fh.read()) if r.get("Kernel Name", "").startswith("k_layout")]
    if len(rows) != len(cases):
        raise SystemExit(f"ncu reported {len(rows)} launches for {len(cases)} cases")
    runs = []
    for i, (c, r) in enumerate(zip(cases, rows)):
        bad = check_data(c, data[str(i)])
        runs.append(
            {
                "id": c["id"],
                "shape": c["shape"],
                "elem_bits": c["elem_bits"],
                "memory": c["memory"],
                "store_layout": c["store_layout"],
                "load_layout": c["load_layout"],
                "store_instr": c["store"]["instr"],
                "load_instr": c["load"]["instr"],
                "predicted": {
                    "store": c["store"]["predicted"],
                    "load": c["load"]["predicted"],
                    "store_instructions": c["store"]["instructions"],
                    "load_instructions": c["load"]["instructions"],
                },
                "measured": {
                    "store": _number(r[STORE_METRIC]),
                    "load": _number(r[LOAD_METRIC]),
                    "store_instructions": _instructions(r, "st"),
                    "load_instructions": _instructions(r, "ld"),
                },
                "data_mismatches": bad,
            }
        )
    import datetime

    with open(results_path, "w") as fh:
        json.dump(
            {
                "schema": 1,
                "kind": "layout_runs",
                **_env(),
                "date": datetime.date.today().isoformat(),
                "runs": runs,
            },
            fh,
            separators=(",", ":"),
        )
    ok = sum(1 for x in runs if x["data_mismatches"] == 0 and x["measured"] == x["predicted"])
    print(
        f"{len(runs)} layout runs, {ok} with correct data and measured = predicted (wavefronts and instructions) -> {results_path}"
    )


def main(argv: list[str]) -> None:
    cmd = argv[0]
    if cmd == "plan":
        specs = [a for a in argv[2:] if a.endswith(".toml")]
        n = int(argv[argv.index("--random") + 1]) if "--random" in argv else 0
        cases = (
            [spec_case(p) for p in specs]
            + random_cases(n)
            + (matrix_cases() if "--matrix" in argv else [])
            + (wide_matrix_cases() if "--wide-matrix" in argv else [])
            + (stmatrix_trans_cases() if "--stsm-trans" in argv else [])
        )
        with open(argv[1], "w") as fh:
            json.dump(cases, fh)
        print(f"{len(cases)} cases -> {argv[1]}")
    elif cmd == "metrics":
        from bankproof.gpu_checks.measure import METRICS

        print(",".join(METRICS + [STSM_INSTRUCTIONS]))
    elif cmd == "run":
        run(argv[1], argv[2])
    elif cmd == "collect":
        collect(argv[1], argv[2], argv[3], argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
