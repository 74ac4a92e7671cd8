"""Which kernel parameters are pointers to global memory, and which of them the kernel writes
through: each register's origin, the u64 parameters its value comes from through arithmetic
(never through a load), and the addresses of global accesses and writes.
"""

from __future__ import annotations

import re

from bankproof.verifier.ptx.module import KernelCode

_REGS = re.compile(r"%[\w$]+")
NO_DEST = frozenset(
    {
        "st",
        "stmatrix",
        "bar",
        "barrier",
        "bra",
        "brx",
        "fence",
        "membar",
        "ret",
        "exit",
        "trap",
        "red",
        "prefetch",
        "griddepcontrol",
        "cp",
        "wgmma",
        "tensormap",
        "setmaxnreg",
        "nanosleep",
        "pmevent",
        "tcgen05",
        "discard",
        "applypriority",
        "createpolicy",
    }
)


def origins(code: KernelCode) -> dict[str, set[str]]:
    """Register -> the u64 parameters (``"<local>"``: the local stack) its value comes from through
    arithmetic (not loads)."""
    origin: dict[str, set[str]] = {}
    for op in code.body:
        if (
            op.opcode.startswith("ld.param")
            and op.opcode[-3:] in ("u64", "b64", "s64")
            and len(op.operands) == 2
        ):
            m = re.fullmatch(r"\[\s*([\w$]+)\s*\]", op.operands[1].strip())
            if m and _REGS.fullmatch(op.operands[0]):
                origin.setdefault(op.operands[0], set()).add(m.group(1))
        elif op.base == "mov" and len(op.operands) == 2 and op.operands[1].startswith("__local_depot"):
            origin.setdefault(op.operands[0], set()).add("<local>")
    changed = True
    while changed:
        changed = False
        for op in code.body:
            if op.base in ("ld", "atom", "call") or op.base in NO_DEST or not op.operands:
                continue
            srcs = set().union(*(origin.get(r, set()) for o in op.operands[1:] for r in _REGS.findall(o)))
            for d in _REGS.findall(op.operands[0])[:1]:
                if srcs - origin.get(d, set()):
                    origin.setdefault(d, set()).update(srcs)
                    changed = True
    return origin


def pointer_params(code: KernelCode) -> tuple[str, ...]:
    """u64 parameters used as global addresses: a register loaded from one reaches (through
    arithmetic, not loads) a ``cvta.to.global`` or the address of a global access or copy."""
    origin = origins(code)
    out: list[str] = []
    for op in code.body:
        regs = []
        if op.base == "cvta" and "global" in op.opcode and len(op.operands) == 2:
            regs = _REGS.findall(op.operands[1])
        elif op.base in ("ld", "st", "cp", "atom", "red", "prefetch") and ".param" not in op.opcode:
            regs = [r for o in op.operands if o.startswith("[") for r in _REGS.findall(o)]
        for r in regs:
            out += sorted(origin.get(r, set()) - {"<local>"})
    return tuple(dict.fromkeys(out))


_LOCAL_SPACES = ("shared", "param", "local", "const")


def written_params(code: KernelCode) -> frozenset[str]:
    """The pointer parameters the kernel may write global memory through (stores, atomics,
    reductions, bulk copies out of shared memory): the parameters its write addresses come from;
    ``"*"`` where a write's address is no parameter's (a loaded pointer, a tensor map).

    >>> from bankproof.verifier.ptx.module import read_module, kernel_code
    >>> code = kernel_code(read_module('''
    ... .visible .entry k(.param .u64 out, .param .u64 inp)
    ... {
    ...   ld.param.u64 %rd1, [out];
    ...   cvta.to.global.u64 %rd2, %rd1;
    ...   st.global.u32 [%rd2+4], 7;
    ... }'''), None)
    >>> sorted(written_params(code))
    ['out']
    """
    origin = origins(code)
    shared = shared_pointers(code)
    out: set[str] = set()
    for op in code.body:
        parts = op.opcode.split(".")
        if op.base in ("st", "atom", "red"):
            if any(p.startswith(_LOCAL_SPACES) for p in parts[1:]):
                continue
        elif op.base in ("cp", "multimem") and "bulk" in parts and parts[-1:] != ["group"]:
            dest = next((p for p in parts[1:] if p.startswith(("global", "shared"))), "")
            if not dest.startswith("global"):
                continue
        else:
            continue
        mem = next((o for o in op.operands if o.lstrip().startswith("[")), "")
        regs = _REGS.findall(mem)
        if "tensor" in parts or not regs:  # through a tensor map, or an address given whole
            out.add("*")
            continue
        if set(regs) & shared:  # a generic access of a shared address
            continue
        got = set().union(*(origin.get(r, set()) for r in regs)) - {"<local>"}
        if not got and not any("<local>" in origin.get(r, ()) for r in regs):
            out.add("*")
        out |= got
    return frozenset(out)


def shared_pointers(code: KernelCode) -> set[str]:
    """Registers holding shared addresses: from a shared symbol (or ``cvta`` of one) through
    arithmetic (never through a load)."""
    syms = {s.name for s in code.shared}
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for op in code.body:
            if op.base in ("ld", "atom", "call") or not op.operands or op.base in NO_DEST:
                continue
            if op.base == "cvta" and "global" in op.opcode:
                continue
            srcs = op.operands[1:]
            hit = any(s.strip() in syms or set(_REGS.findall(s)) & out for s in srcs)
            d = _REGS.findall(op.operands[0])
            if hit and d and d[0] not in out:
                out.add(d[0])
                changed = True
    return out
