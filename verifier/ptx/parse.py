"""Reading PTX text: a kernel's instructions (opcode, operands, predicate, inline-asm scope,
source location), its labels, and which of them touch shared memory (:func:`classify`).

>>> k = parse_kernel('''
... .visible .entry k(.param .u64 k_param_0)
... {
...   ld.shared.v4.b32 {%r6, %r7, %r8, %r9}, [%r4];
... }''')
>>> [(i.opcode, classify(i)) for i in k.body]
[('ld.shared.v4.b32', ('lsu', 'ld128'))]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from bankproof.models.errors import InputError
from bankproof.verifier.ptx.locations import Loc
from bankproof.verifier.ptx.module import KernelCode, PtxModule, kernel_code, read_module

Location = tuple[str, int, int]  # (source file name, line, column)

MEM_OPERAND = re.compile(r"\[\s*([^\]]*?)\s*\]")
MASK32 = (1 << 32) - 1


@dataclass(slots=True)
class Instruction:
    """One PTX instruction of the kernel body."""

    index: int
    line: int  # 1-based line in the PTX text
    opcode: str
    operands: list[str]
    guard: tuple[bool, str] | None  # (negated, predicate register)
    loc: Location  # the kernel's own source location (outermost of an inlined chain)
    scope: int = 0  # inline-asm brace scope (registers declared inside are local to it)


@dataclass
class Kernel:
    """A parsed kernel: its name, parameters, threads per CTA and instructions."""

    name: str
    params: list[tuple[str, str]]  # (type, name)
    threads: int
    body: list[Instruction]
    labels: dict[str, int]  # label -> index of the next instruction
    shared_bytes: int = 0  # static .shared declarations (Triton uses dynamic global_smem)
    tables: dict[str, list[str]] = field(default_factory=dict)  # ``.branchtargets`` jump tables
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # per-kernel analysis caches


def parse_kernel(ptx: str) -> Kernel:
    """The first ``.entry`` of a PTX module (Triton writes one per module), read by the one PTX
    reader (:mod:`.module`) and seen as the evaluator's :class:`Kernel`: each instruction's
    location is what its ``.loc`` line names (the ``inlined_at`` caller, else its own), the file
    by its base name; threads per CTA from ``.reqntid`` (else ``.maxntid``, else 1)."""
    return parse_program(ptx)[2]


def parse_program(ptx: str) -> tuple[PtxModule, KernelCode, Kernel]:
    """The module, its first kernel as the machine runs it, and as the evaluator sees it: one read
    of the text for both (a ``ValueError`` where it is not PTX)."""
    try:
        module = read_module(ptx)
        code = kernel_code(module, module.entries[0])
    except InputError as e:
        raise ValueError(str(e)) from None
    return module, code, kernel_of(code)


def kernel_of(code: KernelCode) -> Kernel:
    """The evaluator's view of a kernel read by :func:`~.module.kernel_code`."""
    wheres: dict[int, Location] = {}  # ops share their .loc: each read once
    body = [
        Instruction(op.index, op.ptx_line, op.opcode, list(op.operands), op.guard,
                    wheres.get(id(op.named)) or wheres.setdefault(id(op.named), _where(op.named)), op.scope)
        for op in code.body
    ]  # fmt: skip
    dims = code.block_hint or code.max_block or (1,)
    threads = int(np.prod(dims))
    tables = {k: list(v) for k, v in code.tables.items()}
    return Kernel(code.name, list(code.params), threads, body, dict(code.labels), tables=tables)


def _where(loc: Loc | None) -> Location:
    return ("", 0, 0) if loc is None else (loc.file.rsplit("/", 1)[-1], loc.line, loc.column)


def type_width(opcode: str) -> int:
    for part in reversed(opcode.split(".")):
        if part[:1] in "usbf" and part[1:].isdigit():
            return int(part[1:])
    return 32


def signed_type(opcode: str) -> bool:
    return any(p[:1] == "s" and p[1:].isdigit() for p in opcode.split("."))


# ----- shared-memory instructions ----------------------------------------------------------------
@dataclass
class SharedOp:
    """A shared-memory instruction: its family, its name in the scan's terms, where it comes from,
    and (where known) each thread's byte offset and whether it is active, as ``(warps, 32)``."""

    ins: Instruction
    family: str  # lsu / ldgsts / tma / mma / mbarrier / tensormap / tmem / atomic
    name: str  # ld32, st128, ldsm.x4.trans, stsm.x4, cp16, tma.load, wgmma, ...
    loops: tuple[int, ...] = ()  # PTX loops around it (ids = index of the loop's first instruction)
    conditional: bool = False  # reached under a branch on a run-time value
    offsets: np.ndarray | None = None
    active: np.ndarray | None = None
    reach: np.ndarray | None = None  # (warps, 32): the threads whose control flow reaches it
    unknown: str = ""  # why the addresses or active lanes are not known
    extra: dict = field(default_factory=dict)


def _lsu_name(opcode: str) -> str | None:
    parts = opcode.split(".")
    if parts[0] in ("ld", "st") and any(p.startswith("shared") for p in parts):
        vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        return f"{parts[0]}{vec * type_width(opcode)}"
    if parts[0] in ("ldmatrix", "stmatrix"):
        x = next((p for p in parts if re.fullmatch(r"x\d", p)), "x1")
        return f"{'ldsm' if parts[0] == 'ldmatrix' else 'stsm'}.{x}{'.trans' if 'trans' in parts else ''}"
    return None


_ASK = ("", "")  # not classified yet


def classes_of(k: Kernel) -> list[tuple[str, str] | None]:
    """:func:`classify` of every instruction of the kernel (computed once)."""
    if "classes" not in k.memo:
        by_opcode: dict[str, tuple[str, str] | None] = {}  # the class is the opcode's, but cp.async's size
        out = []
        for ins in k.body:
            got = by_opcode.get(ins.opcode, _ASK)
            if got is _ASK:
                got = classify(ins)
                if not ins.opcode.startswith("cp.async.c"):
                    by_opcode[ins.opcode] = got
            out.append(got)
        k.memo["classes"] = out
    return k.memo["classes"]


def classify(ins: Instruction) -> tuple[str, str] | None:
    """``(family, name)`` of an instruction that touches shared memory, else ``None``.

    >>> cp = "cp.async.cg.shared.global"
    >>> classify(Instruction(0, 1, cp, ["[%r1]", "[%rd1]", "0x10", "%r2"], None, ("", 0, 0)))
    ('ldgsts', 'cp16.cg')
    """
    op = ins.opcode
    parts = op.split(".")
    lsu = _lsu_name(op)
    if lsu:
        return "lsu", lsu
    if op.startswith("cp.async.bulk"):
        if "commit_group" in parts or "wait_group" in parts:
            return None
        spaces = [p for p in parts[2:] if p.startswith(("shared", "global"))]
        return "tma", "tma.load" if spaces and spaces[0].startswith("shared") else "tma.store"
    if op.startswith("cp.async.c") and "shared" in parts:
        size = int(ins.operands[2], 0) if len(ins.operands) > 2 else 0
        return "ldgsts", f"cp{size}.{parts[2]}"
    if parts[0] in ("atom", "red") and any(p.startswith("shared") for p in parts):
        return "atomic", f"{parts[0]}.shared"
    if parts[0] == "mbarrier" and any(p.startswith("shared") for p in parts):
        return "mbarrier", f"mbarrier.{parts[1]}"
    if parts[0] == "tensormap" and any(p.startswith("shared") for p in parts):
        return "tensormap", f"tensormap.{parts[1]}"
    if parts[0] == "wgmma" and parts[1] == "mma_async":
        return "mma", "wgmma"
    if parts[0] == "tcgen05":
        if parts[1] == "commit":
            return "mbarrier", "tcgen05.commit"
        if parts[1] == "mma":
            return "mma", "tcgen05.mma"
        if any(p.startswith("shared") for p in parts):
            return "tmem", f"tcgen05.{parts[1]}"
    return None
