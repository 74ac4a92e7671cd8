"""A TiledMMA as CuTe builds it (``make_tiled_mma(atom, AtomLayoutMNK, PermutationMNK)``, or
the type ``TiledMMA<MMA_Atom<...>, Layout<...>, Tile<...>>``), and the thread-value layout of its
A, B or C tile (CuTe's ``get_layoutA_TV`` / ``B`` / ``C``, what ``make_tiled_copy_A/B/C`` copies
with), computed element by element the way ``thrfrg_A`` composes it:

- the tile is ``size(permutation)`` per mode (``_``: the atom times the warps), and coordinate
  ``p`` of the permuted tile is element ``permutation(p)`` of the real one (``logical_divide``);
- ``p = atom + AtomM * (warp + Warps * rest)``: the atom's TV layout gives ``atom`` from
  ``(lane, value)``, the warp's ``AtomLayoutMNK`` coordinate gives ``warp``, and the rest of the
  tile is more values (``zipped_divide`` by the atom, then by the warps);
- thread ``t`` is ``(t % atom threads, AtomLayoutMNK^-1(t / atom threads))`` (``right_inverse``
  of ``thr_layout_vmnk``); values are ordered (atom value, rest of mode 0, rest of mode 1).

``tests/test_cute_tiled_mma_oracle.py`` holds this to the CuTe DSL's ``tv_layout_A_tiled`` (and
``B``, ``C``) on random atoms, warp tilings and permutations.

>>> tm = read_tiled_mma("TiledMMA<MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>, Layout<Shape<_2,_2,_1>>, "
...                     "Tile<_32,_32,_16>>")
>>> tm.tile, tm.warps_shape
((32, 32, 16), (2, 2, 1))
>>> idx, tile = tv_index(tm, "B")
>>> tile, idx.shape  # N = 32: two warps of 8, twice
((32, 16), (128, 8))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation.cute_expr import read, strip_namespaces
from bankproof.models.notation.cute_mma_atoms import MmaAtom, mma_atom
from bankproof.models.notation.cute_shapes import evaluate as _at
from bankproof.models.notation.cute_shapes import size
from bankproof.models.notation.cute_subtile import subtile
from bankproof.models.notation.cute_tv import CuteAccess, copy_atom, distributed, layout_value, tv_modes
from bankproof.models.notation.cute_values import Layout, Tag

OPERAND_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}  # (M, N, K) modes of each operand's tile
MAX_TILE = 1 << 12  # elements along one mode of a TiledMMA's tile


@dataclass(frozen=True)
class TiledMma:
    """An MMA atom, its ``AtomLayoutMNK`` (warps or warpgroups) and per-mode permutations
    (``None``: CuTe's ``_``, the atom times the warps, in order)."""

    name: str
    atom: MmaAtom
    warps: Layout
    warps_shape: tuple[int, int, int]
    perms: tuple[Layout | None, Layout | None, Layout | None]
    text: str

    @property
    def tile(self) -> tuple[int, int, int]:
        """The tile the TiledMMA covers: ``size(permutation)`` per mode."""
        return tuple(  # type: ignore[return-value]
            size(p.shape) if p is not None else a * w
            for p, a, w in zip(self.perms, self.atom.mnk, self.warps_shape)
        )


def _warps(value) -> Layout:
    v = layout_value(value, "warps")
    if size(v.shape) > 1024:
        raise InputError("cute", "warps", "sizes must be at least 1, at most 1024 warps", value)
    return v


def _perm(entry, mode: str, field: str) -> Layout | None:
    """One mode of ``Tile<...>``: ``_`` (None), a size (the identity over it) or a layout."""
    if isinstance(entry, Tag) and entry.name in ("_", "Underscore") and not entry.args:
        return None
    if isinstance(entry, int) and not isinstance(entry, bool):
        entry = Layout(entry, 1)
    if not isinstance(entry, Layout):
        raise InputError("cute", field, f"mode {mode} must be _, a size or a layout", entry)
    n = size(entry.shape)
    if not 1 <= n <= MAX_TILE:
        raise InputError("cute", field, f"mode {mode} must cover 1 to {MAX_TILE} elements", n)
    image = np.sort(_at(entry.shape, entry.stride, np.arange(n)))
    if not np.array_equal(image, np.arange(n)):
        raise InputError(
            "cute",
            field,
            f"mode {mode} must be a permutation of 0..{n - 1} (a bijection onto its size)",
            entry,
        )
    return entry


def _tile_entries(tile) -> list:
    v = read(tile) if isinstance(tile, str) else tile
    if isinstance(v, Tag) and v.name in ("Tile", "make_tile"):
        return list(v.args)
    if isinstance(v, tuple):
        return list(v)
    raise InputError("cute", "tile", "must be Tile<...> or make_tile(...) with three modes", tile)


def tiled_mma(atom: str, warps: str = "(1,1,1)", tile: object = None) -> TiledMma:
    """``make_tiled_mma(atom, warps, tile)``; ``tile`` is ``Tile<M, N, K>`` (each ``_``, a size or
    a layout) or ``None``."""
    at = mma_atom(atom)
    wl = _warps(warps)
    shape = wl.shape if isinstance(wl.shape, tuple) else (wl.shape,)
    if len(shape) > 3:
        raise InputError("cute", "warps", "has more than three modes (M, N, K)", warps)
    wshape = tuple(size(m) for m in shape) + (1,) * (3 - len(shape))
    n_w = int(np.prod(wshape))
    if sorted(_at(wl.shape, wl.stride, np.arange(n_w)).tolist()) != list(range(n_w)):
        raise InputError("cute", "warps", "must be a bijection onto the warps", warps)
    entries = [] if tile is None else _tile_entries(tile)
    if len(entries) > 3:
        raise InputError("cute", "tile", "has more than three modes (M, N, K)", tile)
    entries += [Tag("_")] * (3 - len(entries))
    perms = tuple(_perm(e, m, "tile") for e, m in zip(entries, "MNK"))
    for p, a, w, m in zip(perms, at.mnk, wshape, "MNK"):
        if p is not None and size(p.shape) % (a * w):
            raise InputError(
                "cute",
                "tile",
                f"mode {m} covers {size(p.shape)}, not a multiple of the atom's {a} x {w} warps",
            )
    text = f"make_tiled_mma({atom}, {warps}{'' if tile is None else f', {tile}'})"
    return TiledMma(str(atom), at, wl, wshape, perms, text)  # type: ignore[arg-type]


def read_tiled_mma(text: str) -> TiledMma:
    """``TiledMMA<MMA_Atom<X>, Layout<...>[, Tile<...>]>`` or ``make_tiled_mma(X{}, ...)``."""
    v = read(text) if isinstance(text, str) else None
    if not isinstance(v, Tag) or v.name not in ("TiledMMA", "make_tiled_mma") or not 1 <= len(v.args) <= 3:
        raise InputError("cute", "tiled_mma", "must be TiledMMA<MMA_Atom<...>, Layout<...>, Tile<...>>", text)
    atom = _atom_text(v.args[0])
    warps = v.args[1] if len(v.args) > 1 else Layout((1, 1, 1), (0, 0, 0))
    tile = v.args[2] if len(v.args) > 2 else None
    tm = tiled_mma(atom, warps, tile)
    return TiledMma(tm.name, tm.atom, tm.warps, tm.warps_shape, tm.perms, str(text))


def _atom_text(v) -> str:
    """An atom read back to its name (``MMA_Atom<X>`` and template arguments kept)."""
    if isinstance(v, Tag):
        return v.name + (f"<{','.join(_atom_text(a) for a in v.args)}>" if v.args else "")
    if isinstance(v, int):
        return str(v)
    raise InputError("cute", "tiled_mma", "must name its MMA atom first", v)


def tv_index(tm: TiledMma, operand: str) -> tuple[np.ndarray, tuple[int, int]]:
    """``idx[thread, value]``: the index (first mode fastest) into the operand's tile that the
    TiledMMA's ``thread`` holds as ``value``, and that tile's shape."""
    d0, d1 = OPERAND_MODES[operand]
    at = tm.atom
    frag = {"A": at.a, "B": at.b, "C": at.c}[operand]
    if frag is None:
        raise InputError(
            "cute", "operand", f"{tm.name} reads {operand} from shared memory through descriptors"
        )
    thr, val = tv_modes(layout_value(frag, "mma fragment"), "mma fragment")
    n_thr, n_frg = size(thr.shape), size(val.shape)
    tile = tm.tile
    w = tm.warps_shape
    rest = [tile[d] // (at.mnk[d] * w[d]) for d in (d0, d1)]
    n_w = int(np.prod(w))
    warp_of = _at(tm.warps.shape, tm.warps.stride, np.arange(n_w))  # MNK coordinate index -> warp
    coord = np.unravel_index(np.argsort(warp_of), w, order="F")  # warp -> (wm, wn, wk)
    t = np.arange(n_thr * n_w)
    lane, warp = t % n_thr, t // n_thr
    f, r0, r1 = np.unravel_index(np.arange(n_frg * rest[0] * rest[1]), (n_frg, rest[0], rest[1]), order="F")
    o = _at(thr.shape, thr.stride, lane)[:, None] + _at(val.shape, val.stride, f)[None, :]
    a0, a1 = o % at.mnk[d0], o // at.mnk[d0]
    p0 = a0 + at.mnk[d0] * (coord[d0][warp][:, None] + w[d0] * r0[None, :])
    p1 = a1 + at.mnk[d1] * (coord[d1][warp][:, None] + w[d1] * r1[None, :])
    x0, x1 = (_permute(tm.perms[d], p) for d, p in ((d0, p0), (d1, p1)))
    return x0 + tile[d0] * x1, (tile[d0], tile[d1])


def _permute(perm: Layout | None, p: np.ndarray) -> np.ndarray:
    return p if perm is None else _at(perm.shape, perm.stride, p)


# ----- make_tiled_copy_A/B/C ---------------------------------------------------------------------
def mma_fragment(
    atom: str,
    operand: str,
    shape: list[int],
    elem_bits: int,
    warps: str = "(1,1,1)",
    copy: str | None = None,
    kind: str = "load",
    transposed: bool = False,
    tile: object = None,
) -> CuteAccess:
    """The access of ``make_tiled_copy_A/B/C(Copy_Atom<copy>, tiled_mma)`` over a tensor of
    ``shape`` (``(M, K)`` for A, ``(N, K)`` for B, ``(M, N)`` for C): the TiledMMA's TV layout
    over its tile (:func:`tv_index`), the tile repeated over the tensor. ``atom`` is an MMA atom
    (with ``warps``, the ``AtomLayoutMNK``, and ``tile``, the ``Tile<...>`` permutation) or a whole
    ``TiledMMA<...>`` type. ``transposed``: the tensor's dims are the operand's swapped (``(K, M)``,
    ``(K, N)``: an MN-major tile, or FlashAttention's V read as the B operand of ``P @ V``).

    >>> acc = mma_fragment("SM80_16x8x16_F16F16F16F16_TN", "A", [32, 16], 16, "(2,2,1)", "SM75_U32x4_LDSM_N")
    >>> acc.instr, acc.layout.in_bases("warp")
    ('ldsm.x4', ((16, 0), (0, 0)))
    """
    op = operand.upper() if isinstance(operand, str) else ""
    if op not in OPERAND_MODES:
        raise InputError("cute", "operand", "must be A, B or C", operand)
    whole = isinstance(atom, str) and strip_namespaces(atom).lstrip().startswith(
        ("TiledMMA", "make_tiled_mma")
    )
    tm = read_tiled_mma(atom) if whole else tiled_mma(atom, warps, tile)
    idx, op_tile = tv_index(tm, op)
    op_shape = list(shape)[::-1] if transposed else list(shape)
    if len(op_shape) != 2:
        raise InputError("cute", "shape", f"must be 2-D for an MMA operand ({op} tile)", shape)
    full = [max(s, t) for s, t in zip(op_shape, op_tile)] if op == "C" else op_shape
    layout = distributed(idx, full, list(op_tile), "mma fragment")
    if full != op_shape:  # an epilogue subtile: make_tiled_copy_S over part of the C tile
        layout = subtile(layout, op_shape)
    if transposed:
        layout = LinearLayout.from_bases(
            {d: [b[::-1] for b in bs] for d, bs in layout.bases}, {"dim0": shape[0], "dim1": shape[1]}
        )
    ins = None
    name = ""
    if copy is not None:
        a = copy_atom(copy, elem_bits)
        ins = a.load if kind == "load" else a.store
        if ins is None:
            raise InputError("cute", "copy atom", f"{a.name} cannot {kind} shared memory", copy)
        name = a.name
    text = f"make_tiled_copy_{op}({copy or 'any'}, {tm.text})"
    return CuteAccess(layout, ins, text, name)
