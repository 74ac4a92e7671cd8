"""PTX, every kernel's front end: the one reader of PTX text (:mod:`.module`, with
:mod:`.locations`), which ``bankproof kernel``'s machine runs and the Triton wing reads, and the
evaluator of one kernel's shared-memory instructions as the Triton ledger uses it: every thread's
byte address evaluated from ``%tid`` through the integer arithmetic the compiler emitted. Scratch
(reductions, scans, layout conversions) has no layout in the TTGIR; its layout is whatever this
code computes, so it is read from the code itself.

Registers defined once whose inputs are known get one value per thread; anything else (kernel
parameters, loaded data, values carried around a loop) is unknown, and so is an address or a
predicate computed from it. Control flow: blocks are active for the threads whose known branch
conditions lead there (a branch on an unknown value leads both ways, and the instruction is marked
``conditional``); loops are the natural loops of backward branches.

>>> k = parse_kernel('''
... .visible .entry k(.param .u64 k_param_0)
... .reqntid 64
... {
...   mov.u32 %r1, %tid.x;
...   and.b32 %r2, %r1, 31;
...   setp.eq.s32 %p1, %r2, 0;
...   shl.b32 %r3, %r1, 2;
...   mov.b32 %r4, global_smem;
...   add.s32 %r5, %r4, %r3;
...   @%p1 st.shared.b32 [%r5+16], %r2;
...   ld.shared.v4.b32 {%r6, %r7, %r8, %r9}, [%r4];
... }''')
>>> [(op.name, op.family, int(op.active.sum()), int(op.offsets[1][0])) for op in shared_ops(k)]
[('st32', 'lsu', 2, 144), ('ld128', 'lsu', 64, 0)]
"""

from bankproof.verifier.ptx.flow import PtxLoop, analyse, shared_ops
from bankproof.verifier.ptx.machine import compute
from bankproof.verifier.ptx.parse import (
    Instruction,
    Kernel,
    Location,
    SharedOp,
    classify,
    parse_kernel,
)

__all__ = [
    "Instruction", "Kernel", "Location", "PtxLoop", "SharedOp", "compute", "analyse", "classify",
    "parse_kernel", "shared_ops",
]  # fmt: skip
