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
from bankproof.verifier.triton.ttgir import split_top

Location = tuple[str, int, int]  # (source file name, line, column)

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)
_LABEL = re.compile(r"^\s*([$\w]+):")
_PRED = re.compile(r"^@(!?)(%?[\w$]+)\s+")
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


_TOP_COMMA = re.compile(r",(?![^\[{(]*[\]})])")  # a comma outside any bracket group
_NESTED = re.compile(r"[\[{(][^\]})]*[\[{(]")  # a group opened inside another


def _split_operands(text: str) -> list[str]:
    if not any(c in text for c in "[{("):
        return [x.strip() for x in text.split(",") if x.strip()]
    if not _NESTED.search(text):  # groups side by side, none inside another: one regex split
        return [x.strip() for x in _TOP_COMMA.split(text) if x.strip()]
    return [x for x in split_top(text) if x]


def _loc(rest: str, files: dict[str, str]) -> Location | None:
    """``.loc F L C[, function_name ..., inlined_at F2 L2 C2]``: the outermost location."""
    parts = rest.split("inlined_at")
    f, ln, col = (
        parts[-1].replace(",", " ").split()[:3] if len(parts) > 1 else rest.replace(",", " ").split()[:3]
    )
    try:
        return (files.get(f, f), int(ln), int(col))
    except ValueError:
        return None


def _params(text: str) -> list[tuple[str, str]]:
    """An entry's ``.param`` list as (type, name) pairs."""
    out = []
    for p in text.split(","):
        words = p.split()
        if len(words) >= 3 and words[0] == ".param":
            out.append((words[1].lstrip("."), words[-1]))
    return out


def _threads(directives: str) -> int:
    """Threads per CTA from ``.reqntid`` (else ``.maxntid``; 1 when neither is given)."""
    for key in (".reqntid", ".maxntid"):
        t = re.search(re.escape(key) + r"\s+([\d,\s]+)", directives)
        if t:
            return int(np.prod([int(x) for x in t.group(1).replace(",", " ").split()]))
    return 1


def split_guard(text: str) -> tuple[tuple[bool, str] | None, str]:
    """An instruction's predicate guard ``(negated, predicate)`` (``None`` without one) and the rest.

    >>> split_guard("@!%p1 bra $L1")
    ((True, '%p1'), 'bra $L1')
    """
    g = _PRED.match(text)
    return ((g.group(1) == "!", g.group(2)), text[g.end() :]) if g else (None, text)


def _instruction(text: str, index: int, line: int, where: Location, scope: int) -> Instruction:
    """One instruction's text (its ``;`` gone): the predicate guard, the opcode, the operands."""
    guard, text = split_guard(text)
    parts = text.split(None, 1)
    operands = _split_operands(parts[1]) if len(parts) > 1 else []
    return Instruction(index, line, parts[0], operands, guard, where, scope)


def parse_kernel(ptx: str) -> Kernel:
    """The first ``.entry`` of a PTX module (Triton writes one per module)."""
    files = {n: path.rsplit("/", 1)[-1] for n, path in _FILE.findall(ptx)}
    m = _ENTRY.search(ptx)
    if not m:
        raise ValueError("no .entry in the PTX")
    params = _params(m.group(2))
    rest = ptx[m.end() :]
    threads = _threads(rest[: rest.find("{")])
    start = ptx.count("\n", 0, m.end() + rest.find("{")) + 1
    body_text = rest[rest.find("{") + 1 :]
    body: list[Instruction] = []
    labels: dict[str, int] = {}
    where: Location = ("", 0, 0)
    depth, scope, scopes = 0, 0, [0]
    pending = ""
    tables: dict[str, list[str]] = {}
    table: str | None = None  # the jump table being read (``NAME: .branchtargets L1, L2, ...;``)
    last_label = "?"
    for n, raw in enumerate(body_text.splitlines(), start=start):
        line = (raw.split("//", 1)[0] if "//" in raw else raw).strip()
        if not line:
            continue
        if line.startswith(".loc"):
            where = _loc(line[4:], files) or where
            continue
        if line == "{":
            depth += 1
            scope += 1
            scopes.append(scope)
            continue
        if line == "}":
            if depth == 0:
                break
            depth -= 1
            scopes.pop()
            continue
        if table is not None:
            tables[table] += [t.strip() for t in line.rstrip(";").split(",") if t.strip()]
            table = None if line.endswith(";") else table
            continue
        lab = _LABEL.match(line) if ":" in line else None
        if lab and not pending:
            last_label = lab.group(1) if scopes[-1] == 0 else f"{lab.group(1)}@{scopes[-1]}"
            labels[last_label] = len(body)  # inline asm's own labels are local to its braces
            line = line[lab.end() :].strip()
            if not line:
                continue
        if line.startswith(".branchtargets"):
            table = last_label
            tables[table] = []
            line = line[len(".branchtargets") :].strip()
            if line:
                tables[table] += [t.strip() for t in line.rstrip(";").split(",") if t.strip()]
                table = None if line.endswith(";") else table
            continue
        if line.startswith("."):
            continue
        pending += " " + line
        if not pending.rstrip().endswith(";"):
            continue
        text, pending = pending.strip().rstrip(";").strip(), ""
        body.append(_instruction(text, len(body), n, where, scopes[-1]))
    for name in tables:
        labels.pop(name, None)
    return Kernel(m.group(1), params, threads, body, labels, tables=tables)


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


def classes_of(k: Kernel) -> list[tuple[str, str] | None]:
    """:func:`classify` of every instruction of the kernel (computed once)."""
    if "classes" not in k.memo:
        k.memo["classes"] = [classify(ins) for ins in k.body]
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
