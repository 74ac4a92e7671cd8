"""A PTX module read once: its kernels (``.entry``), device functions (``.func``), shared-memory
symbols (``.shared``, static and ``extern`` dynamic), its ``.file`` table, and for every instruction
of a kernel the source location chain (``.loc ... inlined_at``): the innermost line (a CuTe or CUB
header's) and the user's line: the innermost of the chain in the kernel's own file (the line of
the user's code that called into the header).

>>> m = read_module('''
... .version 8.8
... .target sm_90a
... .extern .shared .align 16 .b8 dyn[];
... .visible .entry k(.param .u64 k_param_0)
... {
...   .shared .align 128 .b8 tile[4096];
...   mov.u32 %r1, %tid.x;
...   .loc 1 7 3
...   st.shared.u32 [tile], %r1;
... }
... .file 1 "t.cu"
... ''')
>>> k = kernel_code(m, None)
>>> k.name, [(s.name, s.align, s.size) for s in k.shared], k.body[1].loc
('k', [('tile', 128, 4096), ('dyn', 16, None)], Loc(file='t.cu', line=7, column=3))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from bankproof.models.errors import InputError
from bankproof.models.notation.mlir import split_top
from bankproof.verifier.ptx.locations import Loc, Locations

MAX_INSTRUCTIONS = 400_000  # of one kernel (a fully unrolled CUTLASS kernel has tens of thousands)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_HEADER = re.compile(
    r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M
)
_SHARED = re.compile(
    r"^\s*(?:\.visible\s+|\.weak\s+|\.common\s+)*(\.extern\s+)?(?:\.visible\s+)?\.shared\s+(?:\.align\s+(\d{1,6})\s+)?\.(?:b|u|s|f)(\d{1,3})\s+([\w$]+)\s*(?:\[(\d{0,10})\])?\s*;",
    re.M,
)
_TARGET = re.compile(r"^\s*\.target\s+([\w,\s]+)$", re.M)
_LABEL = re.compile(r"^([$\w]+):")
_PRED = re.compile(r"^@(!?)(%?[\w$]+)\s+")


class Op(NamedTuple):
    """One PTX instruction of a kernel: ``operands`` split at top-level commas; ``guard`` is
    ``(negated, predicate)``; ``scope`` the brace block (an inline-asm block's registers and labels
    are its own); ``loc`` the user's line (the innermost of an inlined chain in the kernel's own
    file), ``inner`` the innermost (a header's, where it was inlined from). A named tuple: a kernel
    has thousands, built four times faster than a frozen dataclass."""

    index: int
    ptx_line: int
    opcode: str
    operands: tuple[str, ...]
    guard: tuple[bool, str] | None
    scope: int
    loc: Loc | None
    inner: Loc | None
    chain: tuple[Loc, ...] = ()  # innermost first, each caller after it (``inlined_at``)
    named: Loc | None = None  # what its ``.loc`` line names: the ``inlined_at`` caller, else its own

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


@dataclass(frozen=True)
class SharedSymbol:
    """A ``.shared`` variable: ``size`` bytes (``None``: ``extern``, the dynamic shared memory)."""

    name: str
    align: int
    size: int | None


@dataclass(frozen=True)
class KernelCode:
    """One kernel of a module, read once: what the machine executes."""

    name: str
    params: tuple[tuple[str, str], ...]  # (type, name)
    block_hint: tuple[int, ...] | None  # .reqntid
    body: tuple[Op, ...]
    labels: Mapping[str, int]  # label (``name@scope`` inside a brace block) -> instruction index
    tables: Mapping[str, tuple[str, ...]]  # .branchtargets
    shared: tuple[SharedSymbol, ...]  # static symbols in declaration order, then the dynamic one
    calls: frozenset[str]  # device functions it calls (not inlined)
    target: str = ""
    local: frozenset[tuple[int, str]] = frozenset()  # registers declared inside a brace block
    functions: Mapping[str, Function] = field(default_factory=dict)  # called .funcs, their bodies appended
    max_block: tuple[int, ...] | None = None  # .maxntid
    pointers: frozenset[str] = frozenset()  # parameters declared ``.ptr`` (addresses, not integers)


@dataclass(frozen=True)
class Function:
    """A called ``.func`` whose body is appended to the kernel's: where it starts, its parameters'
    and return values' names (``.param`` space), and its own top-level scope (its registers)."""

    name: str
    entry: int
    params: tuple[str, ...]
    returns: tuple[str, ...]
    scope: int


@dataclass(frozen=True)
class PtxModule:
    """A PTX module: its kernels and functions by name (their text spans), ``.file`` names, its
    module-level shared symbols and ``.target``."""

    text: str = field(repr=False)
    entries: tuple[str, ...]
    functions: Mapping[str, tuple[int, int]]  # name -> (start, end) offsets of its text, entries too
    files: Mapping[str, str]
    shared: tuple[SharedSymbol, ...]
    target: str


def read_module(ptx: str) -> PtxModule:
    """The kernels, functions, files and module-level shared symbols of ``ptx``."""
    files = {n: path for n, path in _FILE.findall(ptx)}
    spans: dict[str, tuple[int, int]] = {}
    entries = []
    depth_at = _top_level_braces(ptx)
    for m in _HEADER.finditer(ptx):
        open_ = ptx.find("{", m.end())
        if open_ < 0 or ptx.find(";", m.end(), open_) >= 0:
            continue  # a declaration (.func ... ;), not a definition
        close = depth_at.get(open_)
        if close is None:
            raise InputError("kernel", "ptx", "has an unbalanced '{'", m.group(2))
        spans[m.group(2)] = (m.start(), close + 1)
        if m.group(1) == "entry":
            entries.append(m.group(2))
    if not entries:
        raise InputError("kernel", "ptx", "has no .entry (no kernel)")
    outside = _strip_spans(ptx, spans.values())
    shared = tuple(_symbols(outside))
    t = _TARGET.search(ptx)
    return PtxModule(
        ptx,
        tuple(entries),
        MappingProxyType(spans),
        MappingProxyType(files),
        shared,
        t.group(1).strip() if t else "",
    )


def _top_level_braces(text: str) -> dict[int, int]:
    """Offsets of each top-level ``{`` -> its matching ``}`` (comments and strings are PTX-simple:
    ``//`` to the end of a line)."""
    out, stack = {}, []
    for m in _BRACE_OR_COMMENT.finditer(text):
        c = m.group()
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            start = stack.pop()
            if not stack:
                out[start] = m.start()
    return out


_PIECES = re.compile(r"([{};])")
_LONG_DIGITS = re.compile(r"\d{5,}")  # no PTX opcode has a number this long
_OPCODES: set[str] = set()  # opcodes already checked
_BRACE_OR_COMMENT = re.compile(r"//[^\n]*|[{}]")


def _strip_spans(text: str, spans) -> str:
    parts, last = [], 0
    for a, b in sorted(spans):
        parts.append(text[last:a])
        last = b
    parts.append(text[last:])
    return "\n".join(parts)


def _symbols(text: str) -> list[SharedSymbol]:
    out = []
    for m in _SHARED.finditer(text):
        extern, align, bits, name, count = m.groups()
        width = int(bits) // 8 or 1
        size = None if extern or count == "" else width * int(count or 1)
        out.append(SharedSymbol(name, int(align or width), size))
    return out


def kernel_code(module: PtxModule, name: str | None) -> KernelCode:
    """The kernel ``name`` of the module (``None``: the only one; several: refused, naming them)."""
    if name is None:
        if len(module.entries) > 1:
            raise InputError(
                "kernel", "kernel", "must name one kernel of the module: " + ", ".join(module.entries[:20])
            )
        name = module.entries[0]
    if name not in module.entries:
        short = [e for e in module.entries if name in e]
        if len(short) != 1:
            raise InputError(
                "kernel",
                "kernel",
                "is not a kernel of the module (" + ", ".join(module.entries[:20]) + ")",
                name,
            )
        name = short[0]
    a, b = module.functions[name]
    text = module.text[a:b]
    head, _, rest = text.partition("{")
    params = tuple(_params(head))
    hint, most = (_dims(head, key) for key in ("reqntid", "maxntid"))
    start_line = module.text.count("\n", 0, a + len(head) + 1) + 1
    body, labels, tables, local, regs = read_body(rest[: rest.rfind("}")], start_line, module.files)
    shared = tuple(s for s in local if s.size is not None)
    shared += tuple(s for s in module.shared if s.size is not None)
    shared += tuple(s for s in (*local, *module.shared) if s.size is None)
    calls = frozenset(callee(o) for o in body if o.base == "call")
    code = KernelCode(name, params, hint, tuple(body), MappingProxyType(labels), MappingProxyType(tables),
                      shared, calls, module.target, frozenset(regs), max_block=most,
                      pointers=frozenset(_pointers(head)))  # fmt: skip
    return code


def _dims(head: str, key: str) -> tuple[int, ...] | None:
    """A ``.reqntid``/``.maxntid`` directive's dimensions."""
    m = re.search(r"\." + key + r"\s+(\d{1,6}(?:\s*,\s*\d{1,6}){0,2})", head)
    return tuple(int(x) for x in m.group(1).replace(",", " ").split()) if m else None


def callee(op: Op) -> str:
    """The function a ``call`` names."""
    for o in op.operands:
        if not o.startswith("("):
            return o
    return "?"


def _pointers(head: str) -> list[str]:
    """The parameters declared ``.ptr`` (``.param .u64 .ptr .global .align 1 k_param_0``)."""
    inner = head[head.find("(") + 1 : head.rfind(")")] if "(" in head else ""
    return [p.split()[-1] for p in inner.split(",") if ".ptr" in p.split()]


def _params(head: str) -> list[tuple[str, str]]:
    inner = head[head.find("(") + 1 : head.rfind(")")] if "(" in head else ""
    out = []
    for p in inner.split(","):
        words = p.replace("\n", " ").split()
        if len(words) >= 3 and words[0] == ".param":
            out.append((words[1].lstrip("."), re.sub(r"\[.*", "", words[-1])))
    return out


def read_body(text: str, start: int, files: Mapping[str, str], base_scope: int = 0, first_index: int = 0):
    """Statements of a kernel body: split at ``;`` and at scope braces (an inline-asm block often
    sits on one line: ``{ .reg .pred p; setp...; @p add...; }``); braces inside a statement
    (vector operands ``{%r1, %r2}``) are the statement's."""
    st = _Statements(files, base_scope, first_index)
    for n, raw in enumerate(text.splitlines(), start=start):
        line = (raw.split("//", 1)[0] if "//" in raw else raw).strip()
        if not line:
            continue
        if line.startswith(".loc"):
            st.locs.read(raw.strip())  # its comment may name the callers (Triton's PTX)
            continue
        whole = line[-1] == ";" and line.count(";") == 1 and "{" not in line and "}" not in line
        if whole and not st.pending:
            st.pending_line = st.fed_line = n  # one whole statement on its line (most): as feed would
            text = st.label(line[:-1].strip()).strip()
            if text:
                st.statement(text)
            continue
        for piece in _PIECES.split(line):
            st.feed(piece, n)
    for name in st.tables:
        st.labels.pop(name, None)
    return st.body, st.labels, {k: tuple(v) for k, v in st.tables.items()}, st.shared, st.regs


class _Statements:
    def __init__(self, files: Mapping[str, str], base_scope: int = 0, first_index: int = 0):
        self.first = first_index  # a function's body appended after the kernel's continues its numbering
        self.body: list[Op] = []
        self.labels: dict[str, int] = {}
        self.tables: dict[str, list[str]] = {}
        self.shared: list[SharedSymbol] = []
        self.regs: set[tuple[int, str]] = set()
        self.locs = Locations(files)
        self.scopes, self.next_scope = [base_scope], base_scope
        self.pending, self.pending_line, self.fed_line = "", 0, 0
        self.table: str | None = None
        self.last_label = "?"

    def feed(self, piece: str, n: int) -> None:
        if piece in ("{", "}") and not self.pending.strip():
            if piece == "{":
                self.next_scope += 1
                self.scopes.append(self.next_scope)
            elif len(self.scopes) > 1:
                self.scopes.pop()
            return
        if piece == ";":
            text, self.pending = self.pending.strip(), ""
            if text:
                self.statement(text)
            return
        if not self.pending.strip():
            self.pending_line = n
            piece = self.label(piece.strip()) + (" " if piece[-1:].isspace() else "")
        # pieces of one line join as written (``{ %r1, %r2 }``), lines with a space
        self.pending += " " + piece if self.pending and n != self.fed_line else piece
        self.fed_line = n

    def label(self, piece: str) -> str:
        if self.table is None and ":" in piece:  # a label ends in ':' (most statements have none)
            lab = _LABEL.match(piece)
            while lab:
                scope = self.scopes[-1]
                self.last_label = lab.group(1) if scope == 0 else f"{lab.group(1)}@{scope}"
                if self.last_label in self.labels:  # ptxas refuses it: a branch to it means nothing
                    raise InputError("kernel", "ptx", "defines one label twice in a scope", lab.group(1))
                self.labels[self.last_label] = self.first + len(self.body)
                self.labels.setdefault(lab.group(1), self.first + len(self.body))
                piece = piece[lab.end() :].strip()
                lab = _LABEL.match(piece)
        return piece

    def statement(self, text: str) -> None:
        scope = self.scopes[-1]
        if self.table is None and text[0] != ".":  # an instruction (most statements)
            self.body.append(_op(text, self.first + len(self.body), self.pending_line, scope, self.locs))
            if len(self.body) > MAX_INSTRUCTIONS:
                raise InputError(
                    "kernel", "ptx", f"has more than {MAX_INSTRUCTIONS} instructions in one kernel"
                )
            return
        if self.table is not None or text.startswith(".branchtargets"):
            name = self.table or self.last_label
            body = text[len(".branchtargets") :] if text.startswith(".branchtargets") else text
            self.tables.setdefault(name, []).extend(t.strip() for t in body.split(",") if t.strip())
            self.table = None
            return
        if text.startswith((".shared", ".extern")):
            self.shared += _symbols(text + ";")
            return
        if text.startswith(".reg"):
            if scope > 0:
                self.regs.update((scope, r) for r in _declared(text))
            return
        if text.startswith("."):
            return
        self.body.append(_op(text, self.first + len(self.body), self.pending_line, scope, self.locs))
        if len(self.body) > MAX_INSTRUCTIONS:
            raise InputError("kernel", "ptx", f"has more than {MAX_INSTRUCTIONS} instructions in one kernel")


def _declared(line: str) -> list[str]:
    """Registers a ``.reg`` line declares (``%r<4>`` is ``%r0`` .. ``%r3``)."""
    names = []
    for item in line.rstrip(";").split()[2:] if len(line.split()) > 2 else []:
        for name in item.split(","):
            name = name.strip()
            m = re.fullmatch(r"(%?[\w$]+)<(\d{1,7})>", name)
            if m:
                names += [f"{m.group(1)}{i}" for i in range(min(int(m.group(2)), 4096))]
            elif name:
                names.append(name)
    return names


def split_guard(text: str) -> tuple[tuple[bool, str] | None, str]:
    """An instruction's predicate guard ``(negated, predicate)`` (``None`` without one) and the rest.

    >>> split_guard("@!%p1 bra $L1")
    ((True, '%p1'), 'bra $L1')
    """
    g = _PRED.match(text) if text[:1] == "@" else None  # a guard starts with '@'
    return ((g.group(1) == "!", g.group(2)), text[g.end() :]) if g else (None, text)


def _op(text: str, index: int, line: int, scope: int, locs: Locations) -> Op:
    guard, text = split_guard(text)
    parts = text.split(None, 1)
    if parts[0] not in _OPCODES and (
        len(parts[0]) > 96 or (len(parts[0]) > 4 and _LONG_DIGITS.search(parts[0]))
    ):
        raise InputError("kernel", "ptx", f"has an opcode that is not PTX (PTX line {line})", parts[0][:60])
    if len(_OPCODES) < 4096:  # opcodes repeat: each is checked once (bounded: the text is the user's)
        _OPCODES.add(parts[0])
    operands = tuple(filter(None, split_top(parts[1]))) if len(parts) > 1 else ()  # at top-level commas
    return Op(index, line, parts[0], operands, guard, scope, locs.outer, locs.inner, locs.chain, locs.named)
