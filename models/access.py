"""An access = distributed layout + memory layout + dtype + instruction -> every warp
instruction it issues, with each lane's byte address (the enumeration engine's input).

>>> from bankproof.models.notation import parse_layout
>>> d = parse_layout('{"register": [[1, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}', [2, 32])
>>> m = parse_layout("32*m + n", [2, 32])
>>> a = build_access(d.layout, m.layout, elem_bits=32, kind="load")
>>> a.instr.name, a.addresses.shape, a.addresses[1, :3].tolist()
('ld.shared.b32', (2, 32), [128, 132, 136])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models import f2
from bankproof.models.errors import InputError
from bankproof.models.hardware import LANES, Instr, instruction
from bankproof.models.kept import kept
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout, inverse_columns

MAX_ACCESS_BITS = 24  # (warps x lanes x registers) points enumerated per access


@dataclass(frozen=True)
class WarpInstructions:
    """The warp instructions of one access. ``addresses[i, lane]`` is the byte address of
    instruction i; ``warp[i]`` and ``register[i]`` say which warp issues it and its first
    register; ``coords[i, lane]`` the tensor element at that address (the first of the vector);
    ``vector`` is the elements each lane moves per instruction."""

    kind: str
    instr: Instr
    vector: int
    addresses: np.ndarray
    warp: np.ndarray
    register: np.ndarray
    coords: np.ndarray
    block: np.ndarray
    elements: np.ndarray  # (instructions, 32, vector, rank): every element each lane moves


def _matrix_access(kind: str, ins: Instr, addr: np.ndarray, coords: np.ndarray, eb: int) -> WarpInstructions:
    """An ldmatrix/stmatrix access: per instruction, the ``.xN`` matrices' 16-byte row addresses
    (lanes 8j .. 8j+7 address matrix j's rows) such that lane ``l`` gets bytes ``4 * (l % 4)`` to
    ``4 * (l % 4) + 3`` of row ``l // 4`` of matrix j: with ``k = 4 / element bytes`` elements per
    lane and matrix, register ``k*j + e`` holds element ``(l // 4, k * (l % 4) + e)`` (16-bit:
    ``(l // 4, 2 * (l % 4) + e)``; Triton also loads 8- and 32-bit dot operands this way). With
    ``.trans`` (16-bit only) register ``2j + e`` holds ``(2 * (l % 4) + e, l // 4)``. Legal only
    when those rows hold exactly the layout's elements."""
    if (ins.is_load and kind != "load") or (not ins.is_load and kind != "store"):
        raise InputError(
            "access",
            "instr",
            f"is a {'load' if ins.is_load else 'store'} but the access is a {kind}",
            ins.name,
        )
    if eb not in (1, 2, 4) or (ins.trans and eb != 2):
        what = "16-bit elements with .trans" if ins.trans else "8-, 16- or 32-bit elements"
        raise InputError("access", "instr", f"ldmatrix/stmatrix move {what}", f"{eb * 8}-bit")
    m = ins.matrices
    k = 4 // eb  # elements per lane per matrix
    nblock, nwarp, _, nreg = addr.shape
    per = k * m  # registers (elements) each lane holds per instruction
    if nreg % per:
        raise InputError("access", "instr", f"needs a multiple of {per} registers per lane", nreg)
    lanes = np.arange(LANES)
    rows_out, ok = [], True
    for c in range(nreg // per):
        regs = addr[..., c * per : (c + 1) * per]  # (B, W, 32, per) byte addresses the layout wants
        row_addr = np.zeros((nblock, nwarp, LANES), dtype=np.int64)
        for j in range(m):
            for r in range(8):
                if ins.trans:  # lane 4c + ... holds column r of the row r' = 2*(l%4) + e
                    lane, e = 4 * 0 + r // 2, r % 2  # element (row r, col 0): lane with l%4 = r//2, l//4 = 0
                    row_addr[..., 8 * j + r] = regs[..., lane, 2 * j + e]
                else:  # element (row r, col 0) sits in lane 4r, register k*j
                    row_addr[..., 8 * j + r] = regs[..., 4 * r, k * j]
        # What the instruction would deliver, compared with what the layout says.
        want = np.zeros_like(regs)
        for j in range(m):
            for e in range(k):
                if ins.trans:
                    row, col = 2 * (lanes % 4) + e, lanes // 4
                else:
                    row, col = lanes // 4, k * (lanes % 4) + e
                want[..., :, k * j + e] = row_addr[..., 8 * j + row] + col * eb
        ok &= bool((want == regs).all()) and bool((row_addr % 16 == 0).all())
        if not ok:  # the first chunk that cannot be delivered decides (a search tries many)
            break
        rows_out.append(row_addr)
    if not ok:
        raise InputError(
            "access",
            "instr",
            f"{ins.name} cannot deliver this layout's elements from this memory "
            "layout (its registers are not the instruction's fragments)",
            ins.short,
        )
    addresses = np.stack(rows_out, axis=2).reshape(-1, LANES)  # (B, W, chunks, 32)
    n_chunks = nreg // per
    first = coords[..., ::per, :].transpose(0, 1, 3, 2, 4).reshape(-1, LANES, coords.shape[-1])
    rank = coords.shape[-1]
    elements = coords.reshape(nblock, nwarp, LANES, n_chunks, per, rank).transpose(0, 1, 3, 2, 4, 5)
    blk, wrp, chunk = _grid(nblock, nwarp, n_chunks)
    return WarpInstructions(
        kind,
        ins,
        per,
        addresses,
        wrp.reshape(-1),
        chunk.reshape(-1) * per,
        first,
        blk.reshape(-1),
        elements.reshape(-1, LANES, per, rank),
    )


def _grid(nblock: int, nwarp: int, n_chunks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Block, warp and register-chunk index of every warp instruction, chunks fastest (what
    ``np.meshgrid(..., indexing="ij")`` gives, flattened, at a fraction of its cost).

    >>> [a.tolist() for a in _grid(1, 2, 2)]
    [[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1]]
    """
    per_block = nwarp * n_chunks
    blk = np.repeat(np.arange(nblock), per_block)
    wrp = np.tile(np.repeat(np.arange(nwarp), n_chunks), nblock)
    chunk = np.tile(np.arange(n_chunks), nblock * nwarp)
    return blk, wrp, chunk


@kept(16)
def element_offsets(memory: LinearLayout | PaddedLayout) -> np.ndarray:
    """Element offset of every tensor coordinate, as an array of the tensor's shape (one CTA:
    block bits of the memory layout are ignored, each CTA has its own shared memory). Read-only:
    the last few layouts' arrays are kept (a search costs many accesses on one layout)."""
    out = _element_offsets(memory)
    out.setflags(write=False)
    return out


def clear_caches() -> None:
    """Forget the kept tables and offsets (benchmarks time the first call, as a new process would)."""
    from bankproof.models.layout import element_table

    element_table.cache_clear()
    element_offsets.cache_clear()


def _element_offsets(memory: LinearLayout | PaddedLayout) -> np.ndarray:
    lin = memory.linear if isinstance(memory, PaddedLayout) else memory
    offs = LinearLayout((("offset", lin.in_bases("offset")),), lin.out_dims)
    if not offs.is_surjective() or not offs.is_injective():
        raise InputError(
            "memory layout",
            "offset",
            "must map offsets one-to-one onto the tensor "
            f"({'; '.join(offs.memory_violations()[:1]) or 'not invertible'})",
        )
    shape = [s for _, s in lin.out_dims]
    table = offs.table()
    out = np.empty(shape, dtype=np.int64)
    phys = memory.physical_offsets() if isinstance(memory, PaddedLayout) else np.arange(len(table))
    out[tuple(table.T)] = phys
    return out


def access_layout(dist: LinearLayout, memory: LinearLayout | PaddedLayout) -> LinearLayout:
    """The distributed layout as the access walks it: out dims in the memory layout's order,
    registers that only repeat data dropped, and (linear memory) registers at element offsets
    1, 2, 4, ... first so they form the vector."""
    lin = memory.linear if isinstance(memory, PaddedLayout) else memory
    dist = dist.transpose_outs(lin.out_dim_names)
    regs = [b for b in dist.in_bases("register") if any(b)]
    if not isinstance(memory, PaddedLayout):
        regs = vector_first(regs, offsets_of(memory, regs))
    parts = (
        ("register", tuple(regs)),
        ("lane", dist.in_bases("lane")),
        ("warp", dist.in_bases("warp")),
        ("block", dist.in_bases("block")),
    )
    return LinearLayout(parts, dist.out_dims)


def offsets_of(memory: LinearLayout, coords: list[tuple[int, ...]]) -> list[int]:
    """The element offset of each coordinate, from the memory layout's inverse (no table; a layout
    that is not one-to-one is refused by :func:`element_offsets`, with why).

    >>> m = LinearLayout.from_bases({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> offsets_of(m, [(0, 1), (1, 1)])
    [1, 3]
    """
    inv = inverse_columns(memory)
    if inv is None:
        offsets = element_offsets(memory)
        return [int(offsets[tuple(b)]) for b in coords]
    return [f2.apply(inv, memory.pack_dim0_lowest(b)) for b in coords]


def vector_first(regs: list[tuple[int, ...]], off: list[int]) -> list[tuple[int, ...]]:
    """Registers reordered so that those at element offsets 1, 2, 4, ... come first (Triton
    permutes registers to vectorize, §5.3); the rest keep their order."""
    first: list[int] = []
    while True:
        want = 1 << len(first)
        nxt = [i for i, o in enumerate(off) if o == want and i not in first]
        if not nxt:
            break
        first.append(nxt[0])
    return [regs[i] for i in first] + [r for i, r in enumerate(regs) if i not in first]


def vector_ok(addr: np.ndarray, v: int, eb: int) -> bool:
    """Registers r..r+v-1 (r a multiple of v) at consecutive addresses, aligned to v elements."""
    nreg = addr.shape[-1]
    if nreg % v:
        return False
    chunks = addr.reshape(addr.shape[:-1] + (nreg // v, v))
    first = chunks[..., :1]
    return bool((chunks == first + np.arange(v) * eb).all() and (first % (v * eb) == 0).all())


def widest_vector(addr: np.ndarray, eb: int, cap: int = 16) -> int:
    """The most registers (at most ``cap`` bytes, 16 by default) every lane holds at consecutive
    aligned addresses: the vector the widest legal load or store moves (``addr``: ``(...,
    registers)`` bytes)."""
    v, nreg = 1, addr.shape[-1]
    while v * 2 <= nreg and v * 2 * eb <= min(16, cap) and vector_ok(addr, v * 2, eb):
        v *= 2
    return v


def vector_cap(instr: str) -> int:
    """The bytes a ``vector[N]`` instruction keyword allows (``vector``: 16; ``vector64``: 8).

    >>> vector_cap("vector"), vector_cap("vector32"), vector_cap("auto")
    (16, 4, 16)
    """
    tail = instr[len("vector") :] if instr.startswith("vector") else ""
    if tail and (not tail.isdigit() or int(tail) not in (8, 16, 32, 64, 128)):
        raise InputError("access", "instr", "vector takes 8, 16, 32, 64 or 128 bits (vector64)", instr)
    return int(tail) // 8 if tail else 16


def build_access(
    dist: LinearLayout,
    memory: LinearLayout | PaddedLayout,
    elem_bits: int,
    kind: str,
    instr: str = "auto",
) -> WarpInstructions:
    """Enumerate an access. ``instr = "auto"`` picks the widest ``ld``/``st`` vector that is
    legal for the pair (at most 128 bits), as Triton does; so does ``"vector"`` (the width CuTe's
    ``AutoVectorizingCopyWithAssumedAlignment<128>`` copies with), which synthesis keeps to ld/st."""
    if kind not in ("load", "store"):
        raise InputError("access", "kind", "must be load or store", kind)
    lin = memory.linear if isinstance(memory, PaddedLayout) else memory
    if sorted(dist.out_dims) != sorted(lin.out_dims):
        raise InputError(
            "access",
            "layout",
            f"covers {dict(dist.out_dims)} but the memory layout covers {dict(lin.out_dims)}",
        )
    if dist.in_bits > MAX_ACCESS_BITS:
        raise InputError(
            "access",
            "layout",
            f"has 2^{dist.in_bits} (register, lane, warp, block) points, "
            f"over the limit of 2^{MAX_ACCESS_BITS}",
        )
    lanes = dist.in_bases("lane")
    if len(lanes) != 5:
        raise InputError(
            "access",
            "layout",
            f"has a {1 << len(lanes)}-lane warp; the phase model covers {LANES}-lane warps only",
        )
    dist = access_layout(dist, memory)
    eb = max(1, elem_bits // 8)
    if elem_bits % 8 or elem_bits > 64:
        raise InputError("access", "dtype", "must be 8, 16, 32 or 64 bits wide", elem_bits)
    table = dist.table()  # (R * 32 * W * B, rank), register fastest
    nreg, nwarp, nblock = (dist.in_dim_size(d) for d in ("register", "warp", "block"))
    offsets = element_offsets(memory)[tuple(table.T)]
    addr = (offsets * eb).reshape(nblock, nwarp, LANES, nreg)
    coords = table.reshape(nblock, nwarp, LANES, nreg, -1)
    if instr == "auto" or instr.startswith("vector"):  # vector[N]: CuTe's auto-vectorizing copy
        v = widest_vector(addr, eb, vector_cap(instr))
        ins = instruction(f"{'ld' if kind == 'load' else 'st'}{v * eb * 8}")
    else:
        ins = instruction(instr)
        if ins.is_matrix:
            return _matrix_access(kind, ins, addr, coords, eb)
        if ins.is_load != (kind == "load"):
            raise InputError(
                "access",
                "instr",
                f"is a {'load' if ins.is_load else 'store'} but the access is a {kind}",
                instr,
            )
        if ins.width % eb:
            raise InputError(
                "access",
                "instr",
                f"moves {ins.width} bytes, not a whole number of {elem_bits}-bit elements",
                instr,
            )
        v = ins.width // eb
        if v > nreg or not vector_ok(addr, v, eb):
            raise InputError(
                "access",
                "instr",
                f"needs {v} consecutive registers at consecutive aligned addresses, "
                "which this layout pair does not give",
                instr,
            )
    # One instruction per (block, warp, register chunk): lanes' addresses of the chunk's first register.
    first = addr[..., ::v]  # (B, W, 32, R/v)
    n_chunks = first.shape[-1]
    addresses = first.transpose(0, 1, 3, 2).reshape(-1, LANES)
    c = coords[..., ::v, :].transpose(0, 1, 3, 2, 4).reshape(-1, LANES, coords.shape[-1])
    rank = coords.shape[-1]
    elements = coords.reshape(nblock, nwarp, LANES, n_chunks, v, rank).transpose(0, 1, 3, 2, 4, 5)
    elements = elements.reshape(-1, LANES, v, rank)
    blk, wrp, chunk = _grid(nblock, nwarp, n_chunks)
    return WarpInstructions(
        kind, ins, v, addresses, wrp.reshape(-1), chunk.reshape(-1) * v, c, blk.reshape(-1), elements
    )
