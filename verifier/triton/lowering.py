"""Triton's own lowering, as the compile's PTX shows it: the shared-memory instructions Triton
emitted (static, per thread, so per warp), named as the scan names them, and the cache modes of its
``cp.async`` copies. Read from the compile's one PTX parse (each instruction as the PTX reader
classified it), never from a second look at the text. The per-line check of the scan's instruction
policy against these instructions is the ledger's (``ledger.py``: every PTX shared instruction
owned by one access and counted alike).

>>> from bankproof.verifier.ptx.parse import parse_kernel
>>> ptx = '''.visible .entry k(.param .u64 k_p)
... .maxntid 32, 1, 1
... {
...   @%p1 cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;
...   ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r3, %r4, %r5, %r6}, [%r7];
...   st.shared.v2.b32 [%r8], {%r9, %r10};
...   ld.shared.s8 %rs1, [%r11];
...   ret;
... }'''
>>> counts, modes = kernel_counts(parse_kernel(ptx))
>>> sorted(counts.items()), dict(modes)
([('cp16', 1), ('ld8', 1), ('ldsm.x4.trans', 1), ('st64', 1)], {'16': ('cg',)})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from bankproof.verifier.ptx.parse import Kernel, classify
from bankproof.verifier.results import FrozenMap


def kernel_counts(kernel: Kernel) -> tuple[Mapping[str, int], Mapping[str, tuple[str, ...]]]:
    """Each shared-memory instruction's static count (``ld32``, ``st128``, ``ldsm.x4.trans``,
    ``stsm.x2``, ``cp16`` for a 16-byte cp.async) and the cache modes (``ca``/``cg``) Triton used
    for cp.async, per copy size in bytes (``"16"``: the JSON's key)."""
    counts: Counter = Counter()
    modes: dict[int, set[str]] = {}
    for ins in kernel.body:
        c = classify(ins)
        if c is None or c[0] not in ("lsu", "ldsm", "stsm", "ldgsts"):
            continue
        name = c[1]
        if name.startswith("cp"):  # cp16.cg: the copy's size and its cache mode
            name, _, mode = name.partition(".")
            modes.setdefault(int(name[2:]), set()).add(mode)
        counts[name] += 1
    return FrozenMap(counts), FrozenMap({str(k): tuple(sorted(v)) for k, v in sorted(modes.items())})


def access_instr(op: str, instr: str) -> str:
    """A scan access's instruction as the PTX names it: ``ld64`` for a b64 load, ``cp16`` for a
    16-byte ``async_copy_global_to_local``.

    >>> access_instr("ttg.async_copy_global_to_local", "st128"), access_instr("ttg.local_load", "ld64b")
    ('cp16', 'ld64')
    """
    name = instr.replace("64b", "64")
    if op == "ttg.async_copy_global_to_local":
        name = f"cp{int(name[2:]) // 8}"
    return name
