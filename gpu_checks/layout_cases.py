"""Planned whole-layout runs: a case holds the layouts (bases), the memory layout, the dtype and
both instructions, plus the enumerated addresses and the element ids each lane stores and
expects. Values are element ids (row-major flat index) truncated to the element width.

>>> from bankproof.models.layout import LinearLayout
>>> lay = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]], "warp": []}, {"dim0": 32})
>>> mem = LinearLayout.from_bases({"offset": [[1], [2], [4], [8], [16]]}, {"dim0": 32})
>>> c = case_from_layouts("id", lay, lay, mem, 32)
>>> c["store"]["predicted"], c["load"]["expect"][0][:4]
(1, [[0], [1], [2], [3]])
"""

from __future__ import annotations

import random

import numpy as np
from bankproof.gpu_checks.kernels import SMEM_BYTES
from bankproof.models.access import build_access, element_offsets
from bankproof.models.errors import InputError
from bankproof.models.hardware import evaluate
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout


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


def unpack_case(words: np.ndarray, v: int, elem_bits: int) -> np.ndarray:
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


def address_table(addresses: list, first: list[int]) -> list[int] | None:
    """The byte offsets of one access as XOR-linear in (lane, instruction, warp) bits: entry b is
    the offset at key ``1 << b`` with key = lane | instruction-in-warp << 5 | warp << (5 + J);
    None when the warps issue unequal or non-power-of-two counts or the offsets are not linear.

    >>> address_table([[4 * lane for lane in range(32)], [128 + 4 * lane for lane in range(32)]], [0, 2])
    [4, 8, 16, 32, 64, 128]
    """
    addr = np.asarray(addresses, dtype=np.int64)
    counts = {b - a for a, b in zip(first, first[1:])}
    if len(counts) != 1:
        return None
    (n,) = counts
    if n & (n - 1) or len(first) - 1 & (len(first) - 2):
        return None
    jbits, wbits = (n - 1).bit_length(), (len(first) - 2).bit_length()
    keys = np.arange(addr.size, dtype=np.int64)  # row-major (instruction, lane): instruction * 32 + lane
    if int(addr.reshape(-1)[0]) != 0:
        return None
    table = [int(addr.reshape(-1)[1 << b]) for b in range(5 + jbits + wbits)]
    model = np.zeros(addr.size, dtype=np.int64)
    for b, t in enumerate(table):
        model ^= np.where(keys >> b & 1, t, 0)
    return table if np.array_equal(model, addr.reshape(-1)) else None
