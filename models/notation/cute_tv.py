"""CuTe accesses as CuTe users write them: thread-value layouts, TiledCopy with a copy atom, and a
TiledMMA's A/B/C fragments (``make_tiled_copy_A/B/C``), as distributed layouts
``(register, lane, warp) -> tensor coordinate`` with the instruction the atom implies.

A TV layout maps ``(thread, value)`` to an index of the tile, read column-major (CuTe's
``idx2crd``: the first dim fastest). Thread bits 0-4 are the lane, the rest the warp; value bits
are registers. A tile smaller than the tensor is repeated over it (more registers, the tile's
dims in order). Every map is checked linear over F2 by enumerating it.

>>> acc = tiled_copy("UniversalCopy<uint128_t>", "(16,8):(8,1)", "(1,8)", [16, 64], elem_bits=16)
>>> acc.instr, acc.layout.in_bases("register")[:3], acc.layout.in_bases("lane")[:2]
('st128', ((0, 1), (0, 2), (0, 4)), ((0, 8), (0, 16)))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.errors import InputError, is_pow2, log2
from bankproof.models.layout import LinearLayout
from bankproof.models.notation.cute_expr import read
from bankproof.models.notation.cute_names import unknown_atom
from bankproof.models.notation.cute_shapes import compact, leaves, size
from bankproof.models.notation.cute_shapes import evaluate as _at
from bankproof.models.notation.cute_values import TYPE_BITS, Layout, Tag

LANE_BITS = 5
MAX_MODE = 1 << 16  # elements of a thread, value or warp layout (a CTA has at most 1024 threads)


@dataclass(frozen=True)
class CuteAccess:
    """A distributed layout from CuTe and the instruction its atom names (``None``: any)."""

    layout: LinearLayout
    instr: str | None
    text: str
    atom: str = ""
    note: str = ""  # how an auto-vectorizing copy atom was read (its CUTLASS release)


# ----- copy atoms --------------------------------------------------------------------------------
@dataclass(frozen=True)
class CopyAtom:
    """A CuTe copy operation: its instruction for a load and for a store (``None`` where it
    cannot do that direction), and the bits one thread moves per instruction (0: the element)."""

    name: str
    load: str | None
    store: str | None
    bits: int


def _fixed_atoms() -> dict[str, CopyAtom]:
    out = {}
    for n, m in ((1, 1), (2, 2), (4, 4)):
        out[f"SM75_U32x{n}_LDSM_N"] = CopyAtom(f"SM75_U32x{n}_LDSM_N", f"ldsm.x{m}", None, 32 * n)
        out[f"SM75_U16x{2 * n}_LDSM_T"] = CopyAtom(
            f"SM75_U16x{2 * n}_LDSM_T", f"ldsm.x{m}.trans", None, 32 * n
        )
        out[f"SM90_U32x{n}_STSM_N"] = CopyAtom(f"SM90_U32x{n}_STSM_N", None, f"stsm.x{m}", 32 * n)
        out[f"SM90_U16x{2 * n}_STSM_T"] = CopyAtom(
            f"SM90_U16x{2 * n}_STSM_T", None, f"stsm.x{m}.trans", 32 * n
        )
    return out


FIXED_ATOMS = _fixed_atoms()


# CuTe's cp.async atoms (cute/arch/copy_sm80.hpp): the _ZFILL forms issue the same cp.async with a
# source size of 0 when their predicate is off, so their shared-memory side is the same store.
CP_ASYNC_ATOMS = ("SM80_CP_ASYNC_CACHEALWAYS", "SM80_CP_ASYNC_CACHEGLOBAL",
                  "SM80_CP_ASYNC_CACHEALWAYS_ZFILL", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL")  # fmt: skip


def copy_atom(text: str, elem_bits: int) -> CopyAtom:
    """A copy atom by its CuTe name: ``SM75_U32x4_LDSM_N``, ``SM90_U16x8_STSM_T``,
    ``UniversalCopy<uint128_t>``, ``SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>``,
    ``AutoVectorizingCopyWithAssumedAlignment<128>`` (``vector128``: the widest ld/st the layouts
    give, as ``cute::copy`` picks it), or any of these inside ``Copy_Atom<..., half_t>``.

    >>> copy_atom("Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint64_t>, half_t>", 16).store
    'cp8.ca'
    >>> copy_atom("Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>", 16).load
    'vector128'
    """
    value = read(text) if isinstance(text, str) else None
    if isinstance(value, Tag) and value.name == "Copy_Atom" and value.args:
        value = value.args[0]
    if not isinstance(value, Tag):
        raise InputError("cute", "copy atom", "must name a CuTe copy atom (e.g. SM75_U32x4_LDSM_N)", text)
    name, args = value.name, value.args
    if name in FIXED_ATOMS and not args:
        return FIXED_ATOMS[name]
    if name in ("DefaultCopy", "AutoVectorizingCopy") and not args:
        raise InputError(
            "cute", "copy atom",
            f"{name} is an alias that CUTLASS releases define differently (UniversalCopy<uint128_t>, "
            "AutoVectorizingCopyWithAssumedAlignment<8> or <128>), so the width it copies with depends on "
            "your CUTLASS: write what your cute/arch/copy.hpp defines it as",
            text,
        )  # fmt: skip
    if name == "AutoVectorizingCopyWithAssumedAlignment":
        n = args[0] if len(args) == 1 else None
        if n not in (8, 16, 32, 64, 128):
            raise InputError("cute", "copy atom", f"{name}<N> takes N = 8, 16, 32, 64 or 128 bits", text)
        # cute::copy vectorizes to gcd(common contiguous elements x bits, N) (algorithm/copy.hpp):
        # the widest ld/st the layouts allow up to N bits, the element when N is no wider.
        if n <= elem_bits:
            return CopyAtom(f"{name}<{n}>", f"ld{elem_bits}", f"st{elem_bits}", elem_bits)
        return CopyAtom(f"{name}<{n}>", f"vector{n}", f"vector{n}", 0)
    if name in ("UniversalCopy", *CP_ASYNC_ATOMS) and len(args) >= 1:
        t = args[0]
        width = TYPE_BITS.get(t.name) if isinstance(t, Tag) else None
        if width is None:
            raise InputError("cute", "copy atom", f"{name} takes an element type such as uint128_t", text)
    else:
        unknown_atom("copy", name, text)
    full = f"{name}<{args[0].name}>" if args else name
    if name.startswith("SM80_CP_ASYNC"):
        mode = "cg" if "GLOBAL" in name else "ca"
        if width not in (32, 64, 128) or (mode == "cg" and width != 128):
            allowed = "uint128_t" if mode == "cg" else "uint32_t, uint64_t or uint128_t"
            raise InputError(
                "cute", "copy atom", f"{name} copies {allowed} (cp.async 4, 8 or 16 bytes)", text
            )
        return CopyAtom(full, None, f"cp{width // 8}.{mode}", width)
    if width not in (8, 16, 32, 64, 128):
        raise InputError("cute", "copy atom", "moves 8 to 128 bits per thread", text)
    return CopyAtom(full, f"ld{width}", f"st{width}", width)


# ----- TV layouts -> distributed layouts ---------------------------------------------------------
def layout_value(value, field: str) -> Layout:
    """A CuTe layout from text, a size or a shape (compact, first mode fastest), sizes checked."""
    v = read(value) if isinstance(value, str) else value
    if isinstance(v, int) and not isinstance(v, bool):
        v = Layout(v, 1)
    if isinstance(v, tuple):  # a shape alone: compact, first mode fastest
        v = Layout(v, compact(v, right=False))
    if not isinstance(v, Layout):
        raise InputError("cute", field, "must be a CuTe layout (shape):(stride)", value)
    sizes = leaves(v.shape)
    if any(s < 1 for s in sizes):
        raise InputError("cute", field, "sizes must be at least 1", value)
    if size(v.shape) > MAX_MODE:
        raise InputError("cute", field, f"has more than {MAX_MODE} elements", value)
    return v


def evaluate(layout: Layout, index: np.ndarray) -> np.ndarray:
    """A CuTe layout at 1-D indices (the coordinate split first mode fastest)."""
    return _at(layout.shape, layout.stride, index)


def tv_modes(layout: Layout, field: str) -> tuple[Layout, Layout]:
    if not isinstance(layout.shape, tuple) or len(layout.shape) != 2:
        raise InputError("cute", field, "must have two modes: (thread, value)", f"{layout.shape}")
    return Layout(layout.shape[0], layout.stride[0]), Layout(layout.shape[1], layout.stride[1])


def tv_to_layout(tv, shape: list[int], tile: list[int] | None = None, field: str = "cute_tv") -> LinearLayout:
    """A ``(thread, value) -> tile index`` layout as ``(register, lane, warp) -> coordinate``.

    >>> tv_to_layout("((4,8),(2,2)):((32,1),(16,8))", [16, 8]).in_bases("lane")
    ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))
    """
    lay = layout_value(tv, field)
    thr, val = tv_modes(lay, field)
    n_thr, n_val = size(thr.shape), size(val.shape)
    t, v = np.meshgrid(np.arange(n_thr), np.arange(n_val), indexing="ij")
    return distributed(evaluate(thr, t) + evaluate(val, v), shape, list(tile or shape), field)


def distributed(idx: np.ndarray, shape: list[int], tile: list[int], field: str) -> LinearLayout:
    """``idx[thread, value]`` (a tile index) as ``(register, lane, warp) -> coordinate``, checked
    linear; the tile repeated over ``shape``."""
    n_thr, n_val = idx.shape
    for what, n in (("thread", n_thr), ("value", n_val)):
        if not is_pow2(n):
            raise InputError("cute", field, f"{what} mode size must be a power of two", n)
    if n_thr < 32:
        raise InputError("cute", field, "thread mode must cover a 32-lane warp", n_thr)
    if len(tile) != len(shape) or any(not is_pow2(t) or s % t for t, s in zip(tile, shape)):
        raise InputError("cute", "tile", f"must be powers of two dividing the shape {shape}", tile)
    t, v = np.meshgrid(np.arange(n_thr), np.arange(n_val), indexing="ij")
    total = int(np.prod(tile))
    if idx.min() < 0 or idx.max() >= total:
        raise InputError(
            "cute", field, f"reaches index {int(idx.max())}, outside the {'x'.join(map(str, tile))} tile"
        )
    coord = np.stack(np.unravel_index(idx, tile, order="F"), axis=-1)  # (thread, value, rank), dim0 fastest

    def image(th: int, va: int) -> tuple[int, ...]:
        return tuple(int(x) for x in coord[th, va])

    regs = [image(0, 1 << k) for k in range(log2(n_val))]
    thr_bases = [image(1 << k, 0) for k in range(log2(n_thr))]
    dims = {f"dim{i}": s for i, s in enumerate(shape)}
    lay = LinearLayout.from_bases(
        {"register": regs, "lane": thr_bases[:LANE_BITS], "warp": thr_bases[LANE_BITS:]}, dims
    )
    got = lay.apply_arrays(register=v, lane=t % 32, warp=t >> LANE_BITS)
    acc = np.stack([got[d] for d in dims], axis=-1)
    if not np.array_equal(acc, coord):
        th, va = (int(x[0]) for x in np.nonzero((acc != coord).any(-1)))
        raise InputError(
            "cute",
            field,
            f"is not linear over F2: thread {th}, value {va} goes to {image(th, va)}, "
            f"the XOR of its bits' images is {tuple(int(x) for x in acc[th, va])}",
        )
    # the tile repeated over the tensor: one register bit per doubling, dims in order
    for d, (s, tl) in enumerate(zip(shape, tile)):
        for k in range(log2(s // tl)):
            e = [0] * len(shape)
            e[d] = tl << k
            regs.append(tuple(e))
    return lay.with_in_bases("register", regs)


def tiled_copy(
    atom: str, thr: str, val: str, shape: list[int], elem_bits: int, kind: str = "store"
) -> CuteAccess:
    """``make_tiled_copy(Copy_Atom<atom, T>, thr_layout, val_layout)`` over ``shape``: thread
    ``(m, n)`` of ``thr_layout`` holds the ``val_layout`` block at ``(m * Vm, n * Vn)`` (CuTe's
    ``raked_product``), the tile is repeated over the tensor. The atom must move exactly the
    values one thread holds in a row of registers: its bits are a multiple of the element's and
    divide the thread's values."""
    a = copy_atom(atom, elem_bits)
    ins = a.load if kind == "load" else a.store
    if ins is None:
        raise InputError("cute", "copy atom", f"{a.name} cannot {kind} shared memory", atom)
    tl, vl = layout_value(thr, "thr_layout"), layout_value(val, "val_layout")
    rank = len(shape)
    tshape = _rank(tl, rank, "thr_layout")
    vshape = _rank(vl, rank, "val_layout")
    tile = [ts * vs for ts, vs in zip(tshape, vshape)]
    n_thr, n_val = int(np.prod(tshape)), int(np.prod(vshape))
    # (m, n) -> (thread, value), inverted into (thread, value) -> tile index
    inv = np.full((n_thr, n_val), -1, dtype=np.int64)
    grid = np.indices(tile).reshape(rank, -1)
    tc = [g // vs for g, vs in zip(grid, vshape)]
    vc = [g % vs for g, vs in zip(grid, vshape)]
    th = evaluate(tl, np.ravel_multi_index(tc, tshape, order="F"))
    va = evaluate(vl, np.ravel_multi_index(vc, vshape, order="F"))
    inside = th.min() >= 0 and va.min() >= 0 and th.max() < n_thr and va.max() < n_val
    if not inside or len(set(zip(th.tolist(), va.tolist()))) != th.size:
        raise InputError("cute", "thr_layout/val_layout", "must each be a bijection onto their size")
    inv[th, va] = np.ravel_multi_index(grid, tile, order="F")
    layout = distributed(inv, shape, tile, "thr_layout")
    width = a.bits or elem_bits
    _check_atom(a, width, elem_bits, n_val)
    text = f"make_tiled_copy(Copy_Atom<{a.name}>, {thr}, {val})"
    return CuteAccess(layout, ins, text, a.name)


def _rank(layout: Layout, rank: int, field: str) -> list[int]:
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    sizes = [size(m) for m in shape] + [1] * (rank - len(shape))
    if len(sizes) != rank:
        raise InputError("cute", field, f"has more modes than the tensor's {rank} dims", layout.shape)
    return sizes


def _check_atom(atom: CopyAtom, width: int, elem_bits: int, n_val: int) -> None:
    if width % elem_bits:
        raise InputError(
            "cute",
            "copy atom",
            f"{atom.name} moves {width} bits, not a whole number of {elem_bits}-bit elements",
        )
    per = width // elem_bits
    if n_val % per:
        raise InputError(
            "cute",
            "copy atom",
            f"{atom.name} moves {per} elements per thread but each thread holds {n_val} (not a multiple)",
        )
