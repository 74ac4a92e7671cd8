"""The PTX instruction set's opcodes (the PTX ISA, chapter 9.7 "Instructions", through PTX 8.8:
every instruction's base name, the word before its first ``.``). An opcode outside it is one
bankproof cannot say anything about, shared memory included: the kernel's verdict is unknown at
its line, never proved.

>>> unknown_opcodes(["ld.shared.u32", "frob.shared.u32", "mov.u32", "frob.b32"])
['frob']
"""

from __future__ import annotations

from collections.abc import Iterable

PTX_OPCODES = frozenset(
    """
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
    brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div
    dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypeof ld ldmatrix
    ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24
    multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
    sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
    sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff
    vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote
    vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
    """.split()
)


def unknown_opcodes(opcodes: Iterable[str]) -> list[str]:
    """The base names among ``opcodes`` that are not PTX instructions, each once, in order."""
    return list(dict.fromkeys(o.split(".", 1)[0] for o in opcodes if o.split(".", 1)[0] not in PTX_OPCODES))


__all__ = ["PTX_OPCODES", "unknown_opcodes"]
