"""CuTe's MMA atoms, each with the thread-value layouts CuTe itself defines for it (``ALayout``
over ``(M, K)``, ``BLayout`` over ``(N, K)``, ``CLayout`` over ``(M, N)``; CUTLASS
``include/cute/atom/mma_traits_sm80.hpp`` and ``mma_traits_sm89.hpp``), keyed by the atom's full
name: two atoms of one shape (the f16 and the tf32 m16n8k8, the f16 and the s8 m16n8k16) have
different fragments, so an atom is never looked up by its shape. An atom missing from the table
is refused by name.

>>> mma_atom("SM80_16x8x8_F32TF32TF32F32_TN").a
'((4,8),(2,2)):((16,1),(8,64))'
>>> mma_atom("SM80_16x8x8_F32F16F16F32_TN").a
'((4,8),(2,2)):((32,1),(16,8))'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bankproof.models.errors import InputError
from bankproof.models.notation.cute_expr import strip_namespaces
from bankproof.models.notation.cute_names import unknown_atom


@dataclass(frozen=True)
class MmaAtom:
    """An MMA atom's shape ``(M, N, K)``, threads, and the TV layouts of its operands (CuTe's
    ``ALayout``, ``BLayout``, ``CLayout``); ``None`` for an operand read from shared memory
    through a descriptor (SM90 GMMA ``SS``)."""

    mnk: tuple[int, int, int]
    threads: int
    a: str | None
    b: str | None
    c: str


# CuTe's named fragments (mma_traits_sm80.hpp, anonymous namespace)
_8x4 = "((4,8),1):((8,1),0)"  # SM80_8x4: (T32,V1) -> (M8,N4)
_8x8_ROW = "((4,8),2):((16,1),8)"  # SM80_8x8_Row
_8x16_ROW = "((4,8),4):((32,1),8)"  # SM80_8x16_Row
_16x8_ROW = "((4,8),(2,2)):((32,1),(16,8))"  # SM80_16x8_Row

_F16_16x8x8 = MmaAtom((16, 8, 8), 32, _16x8_ROW, _8x8_ROW, _16x8_ROW)
_F16_16x8x16 = MmaAtom(
    (16, 8, 16), 32, "((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", _16x8_ROW
)
_S8_8x8x16 = MmaAtom((8, 8, 16), 32, _8x16_ROW, _8x16_ROW, _8x8_ROW)
_S8_16x8x16 = MmaAtom((16, 8, 16), 32, "((4,8),(4,2)):((64,1),(16,8))", _8x16_ROW, _16x8_ROW)
_S8_16x8x32 = MmaAtom(
    (16, 8, 32), 32, "((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", _16x8_ROW
)

# CuTe's SIMT atom (mma_traits.hpp: MMA_Traits<UniversalFMA<D,A,B,C>>): one thread, one FMA,
# Shape_MNK 1x1x1, ThrID Layout<_1>, A, B and C each Layout<Shape<_1,_1>>
UNIVERSAL_FMA = MmaAtom((1, 1, 1), 1, "(1,1):(0,0)", "(1,1):(0,0)", "(1,1):(0,0)")

MMA_ATOMS: dict[str, MmaAtom] = {
    # fp16/bf16 inputs (every accumulator CuTe pairs with them)
    **{f"SM80_16x8x8_{t}_TN": _F16_16x8x8 for t in ("F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32")},
    **{f"SM80_16x8x16_{t}_TN": _F16_16x8x16 for t in ("F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32")},
    # tf32: fragments of their own
    "SM80_16x8x4_F32TF32TF32F32_TN": MmaAtom((16, 8, 4), 32, "((4,8),2):((16,1),8)", _8x4, _16x8_ROW),
    "SM80_16x8x8_F32TF32TF32F32_TN": MmaAtom(
        (16, 8, 8), 32, "((4,8),(2,2)):((16,1),(8,64))", "((4,8),2):((8,1),32)", _16x8_ROW
    ),  # fmt: skip
    # fp64 (and CuTe's complex fp64 atoms, the same layouts)
    **{
        f"SM80_8x8x4_{t}_TN": MmaAtom((8, 8, 4), 32, _8x4, _8x4, _8x8_ROW)
        for t in ("F64F64F64F64", "C64C64C64C64", "GC64C64C64GC64")
    },  # fmt: skip
    # 8-bit integers, every signedness, with or without saturation
    **{
        f"SM80_{shape}_S32{ab}S32_TN{sat}": atom
        for shape, atom in (("8x8x16", _S8_8x8x16), ("16x8x16", _S8_16x8x16), ("16x8x32", _S8_16x8x32))
        for ab in ("S8S8", "S8U8", "U8S8", "U8U8")
        for sat in ("", "_SATURATE")
    },  # fmt: skip
    # fp8 on sm89 (mma_traits_sm89.hpp: the s8 m16n8k32 fragments)
    **{f"SM89_16x8x32_F32{ab}F32_TN": _S8_16x8x32 for ab in ("E4M3E4M3", "E4M3E5M2", "E5M2E5M2", "E5M2E4M3")},
}


# SM90 GMMA (mma_traits_sm90_gmma.hpp): C is CLayout_64xN; an RS atom reads A from registers
# (ALayout_64x8 / 64x16 / 64x32 by the A type's width), an SS atom reads A and B through descriptors.
_GMMA_A = {32: "((4,8,4),(2,2)):((64,1,16),(8,256))", 16: "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))",
           8: "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))"}  # fmt: skip
_GMMA_AB_BITS = {"F16F16": 16, "BF16BF16": 16, "TF32TF32": 32, **{
    f"{a}{b}": 8 for a in ("S8", "U8", "E4M3", "E5M2") for b in ("S8", "U8", "E4M3", "E5M2")
    if (a in ("S8", "U8")) == (b in ("S8", "U8"))}}  # fmt: skip
_GMMA = re.compile(r"(?:SM90_|MMA_)64x(\d{1,3})x(\d{1,2})_(F16|F32|S32)([A-Z0-9]+)"
                   r"_(SS|RS)(_TN)?(?:<(.*)>)?(?:\{\})?")  # fmt: skip


def gmma_atom(name: str) -> MmaAtom | None:
    """An SM90 GMMA atom by CuTe's name, with its template arguments (``GMMA::Major::K`` or
    ``MN`` for A and B); ``None`` when ``name`` is not a GMMA name.

    >>> gmma_atom("SM90_64x64x16_F32F16F16_RS<GMMA::Major::K, GMMA::Major::MN>").a
    '((4,8,4),(2,2,2)):((128,1,16),(64,8,512))'
    """
    m = _GMMA.fullmatch(strip_namespaces(name).replace(" ", ""))
    if not m:
        return None
    n, k, ab, src, targs = int(m.group(1)), int(m.group(2)), m.group(4), m.group(5), m.group(7) or ""
    bits = _GMMA_AB_BITS.get(ab)
    if bits is None:
        raise InputError("cute", "mma atom", f"has A/B types {ab} that no SM90 GMMA atom takes", name)
    if k * bits != 256:
        raise InputError("cute", "mma atom", f"{ab} GMMA atoms have K = {256 // bits}, not {k}", name)
    if n % 8 or not 8 <= n <= 256:
        raise InputError("cute", "mma atom", "GMMA N must be a multiple of 8 from 8 to 256", name)
    majors = [x.strip() for x in targs.split(",")] if targs else []
    if src == "RS" and majors and majors[0] != "K":
        raise InputError("cute", "mma atom", "an RS atom reads A from registers, so A must be Major::K", name)
    c = f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"
    return MmaAtom((64, n, k), 128, _GMMA_A[bits] if src == "RS" else None, None, c)


def mma_atom(name: str) -> MmaAtom:
    """The atom named ``name``: one of :data:`MMA_ATOMS`, or an SM90 GMMA atom
    (``SM90_64xNxK_..._SS`` / ``_RS``, with or without its template arguments).

    >>> mma_atom("SM90_64x128x16_F32F16F16_SS").c
    '((4,8,4),(2,2,16)):((128,1,16),(64,8,512))'
    >>> wrapped = mma_atom("MMA_Atom<MMA_Traits<cute::SM80_16x8x8_F32TF32TF32F32_TN>>")
    >>> wrapped == mma_atom("SM80_16x8x8_F32TF32TF32F32_TN")
    True
    """
    n = name.strip() if isinstance(name, str) else ""
    n = strip_namespaces(n).replace(" ", "")
    while m := re.fullmatch(r"(?:MMA_Atom|MMA_Traits)<(.*)>(?:\{\})?", n):  # CUTLASS's wrappers
        n = m.group(1)
    if n in MMA_ATOMS:
        return MMA_ATOMS[n]
    if re.fullmatch(r"UniversalFMA(?:<[\w:,]*>)?(?:\{\})?", n):
        return UNIVERSAL_FMA
    gmma = gmma_atom(n)
    if gmma is not None:
        return gmma
    bare = re.sub(r"(?:<.*>)?(?:\{\})?$", "", n) if n.count("<") == n.count(">") else ""
    unknown_atom("mma", bare, name if isinstance(name, str) else str(type(name).__name__))
    raise AssertionError("unreachable")  # unknown_atom always raises
