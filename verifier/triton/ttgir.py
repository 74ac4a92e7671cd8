"""A TTGIR text reader that needs no Triton: attribute aliases, source locations, and the ops that
touch shared memory, with their tensor and memdesc types.

>>> m = read_ttgir('''module {
... #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32],
...   warpsPerCTA = [4, 1], order = [1, 0]}>
... #shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
... #loc3 = loc("k.py":7:9)
... %a = ttg.local_alloc %x : (tensor<16x32xf32, #blocked>) -> !ttg.memdesc<16x32xf32, #shared> loc(#loc3)''')
>>> op = m.ops[0]
>>> op.name, op.result, op.operands, op.types[0].shape, op.types[1].encoding, op.loc, op.line
('ttg.local_alloc', '%a', ['%x'], (16, 32), '#shared', ('k.py', 7, 9), 6)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bankproof.models import dtypes
from bankproof.models.errors import InputError
from bankproof.models.notation.mlir import split_top

SHARED_OPS = (
    "ttg.local_alloc",
    "ttg.local_store",
    "ttg.local_load",
    "ttg.async_copy_global_to_local",
    "ttg.memdesc_index",
    "ttg.memdesc_subslice",
    "ttg.memdesc_trans",
    "ttg.memdesc_reshape",
    "ttg.convert_layout",
)
MMA_OPS = ("ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")  # operands A, B first
SCAN_OPS = SHARED_OPS + MMA_OPS  # what the scan reads: the accesses, and which dot operand a buffer is
MAX_TEXT = 64 * 1024 * 1024
MAX_DEFS = 1 << 20  # op results kept for value tracing

ALIAS = re.compile(r"^#([\w$.-]+)\s*=\s*(.*)$")
_OP = re.compile(r"^\s*(?:(%[\w$.#-]+)(?::\d+)?\s*=\s*)?([a-z_]+\.[a-z0-9_.]+)\b(.*)$")
LOC_FILE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d{1,9}):(\d{1,9})')
LOC_REF = re.compile(r"#(loc\d*)\b")
LOC_NAME = re.compile(r'loc\("((?:[^"\\:]|\\.){1,200})"\(')  # a name location: loc("name"(...))
LOC_ALIAS = re.compile(r"loc\(#(loc\d*)\)")


@dataclass(frozen=True)
class Type:
    """A ``tensor<...>`` or ``!ttg.memdesc<...>`` type: shape, element type and encoding text."""

    kind: str  # "tensor" or "memdesc"
    shape: tuple[int, ...]
    elem: str
    encoding: str
    text: str
    alloc_shape: tuple[int, ...] = ()  # a memdesc view's allocation shape, when written

    @property
    def elem_bits(self) -> int | None:
        try:
            return dtypes.bits(self.elem)
        except InputError:
            return None


@dataclass
class Op:
    """One op of interest, as written: its line (1-based), name, result, operands, types and loc."""

    line: int
    name: str
    result: str | None
    operands: list[str]
    types: list[Type]
    loc: tuple[str, int, int] | None
    text: str
    name_loc: str | None = None  # the source's name for the value (an MLIR name location), if given
    loop_depth: int = 0  # the scf.for loops around it


@dataclass
class Module:
    aliases: dict[str, str] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    block_args: dict[str, str] = field(default_factory=dict)  # loop-carried value -> initial value
    yields: dict[str, str] = field(default_factory=dict)  # loop-carried value -> the value its loop yields
    defs: dict[str, str] = field(default_factory=dict)  # every op's result -> its line, for value tracing
    func_args: list[str] = field(default_factory=list)  # the kernel's argument names, in order
    num_warps: int | None = None
    target: str | None = None

    def expand(self, encoding: str) -> str:
        """An encoding with the alias definitions it may refer to, ready for ``parse_layout``."""
        defs = [f"#{k} = {v}" for k, v in self.aliases.items() if v.startswith(("#ttg.", "#ttng."))]
        return "\n".join(defs + [encoding])


def _balanced(text: str, start: int) -> int:
    """Index just past the ``<...>`` group opening at ``text[start] == '<'``."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i + 1
    raise InputError("ttgir", "type", "has unbalanced '<' '>'", text[start : start + 60])


def parse_type(text: str) -> Type:
    """``tensor<64x64xf16, #blocked>`` or ``!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>``.

    >>> parse_type("!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>").shape
    (2, 64, 64)
    >>> parse_type("tensor<64x!tt.ptr<f16>, #blocked>").elem
    'f16'
    >>> parse_type("!ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x32>").alloc_shape
    (128, 32)
    """
    kind = "memdesc" if text.startswith(("!ttg.memdesc", "<")) else "tensor"
    inner = text[text.index("<") + 1 : -1]
    parts = split_top(inner)
    dims, elem = [], parts[0]
    while True:
        m = re.match(r"(\d{1,18})x", elem)
        if not m:
            break
        dims.append(int(m.group(1)))
        elem = elem[m.end() :]
    ptr = re.fullmatch(r"!tt\.ptr<(\w+)(?:,.*)?>", elem)
    if ptr:
        elem = ptr.group(1)
    encoding = parts[1] if len(parts) > 1 else ""
    alloc = next((p for p in parts[2:] if re.fullmatch(r"\d{1,18}(?:x\d{1,18})*", p)), "")
    alloc_shape = tuple(int(x) for x in alloc.split("x")) if alloc else ()
    return Type(kind, tuple(dims), elem, encoding, text, alloc_shape)


def find_types(text: str) -> list[Type]:
    out = []
    for m in re.finditer(r"(?:!ttg\.memdesc|\btensor|(?<=-> ))<", text):
        end = _balanced(text, m.end() - 1)
        out.append(parse_type(text[m.start() : end]))
    return out


def _resolve_loc(ref: str, locs: dict[str, str], depth: int = 0) -> tuple[str, int, int] | None:
    """The first ``"file":line:col`` a location (possibly through aliases, names, fusions) names."""
    m = LOC_FILE.search(ref)
    if m and len(m.group(2)) < 10 and len(m.group(3)) < 10:
        return (m.group(1), int(m.group(2)), int(m.group(3)))
    if depth > 32:
        return None
    for r in LOC_REF.findall(ref):
        if r in locs:
            found = _resolve_loc(locs[r], locs, depth + 1)
            if found:
                return found
    return None


def _resolve_name(ref: str, locs: dict[str, str], depth: int = 0) -> str | None:
    """The name a location gives its value (``loc("acc"(#loc3))``, possibly through aliases), or
    None: the source variable Triton names the value after.

    >>> _resolve_name("loc(#loc2)", {"loc2": 'loc("a"(#loc1))', "loc1": 'loc("k.py":3:4)'})
    'a'
    """
    m = LOC_NAME.match(ref)
    if m:
        return m.group(1)
    alias = LOC_ALIAS.fullmatch(ref)
    if alias and alias.group(1) in locs and depth < 32:
        return _resolve_name(locs[alias.group(1)], locs, depth + 1)
    return None


def trailing_loc(text: str) -> tuple[str, str]:
    """Split an op's text into its body and its trailing ``loc(...)``."""
    i = text.rfind(" loc(")
    if i < 0:
        return text, ""
    return text[:i], text[i + 1 :]


def _track_regions(
    line: str, m, carried: list[str], regions: list[tuple[list[str], bool]], yields: dict
) -> None:
    """Pair each ``scf.for``'s loop-carried values with what its ``scf.yield`` yields, and keep
    which open regions are ``scf.for`` bodies (regions are followed by the braces a line opens or
    closes; attribute dicts close on their own line)."""
    if m and m.group(2) == "scf.yield" and regions and regions[-1][0]:
        head = line.split("scf.yield", 1)[1].split(" : ", 1)[0]
        yields.update(zip(regions[-1][0], re.findall(r"%[\w$.#-]+", head)))
    net = line.count("{") - line.count("}")
    if net > 0:
        regions.extend([(carried, bool(m) and m.group(2) == "scf.for")] + [([], False)] * (net - 1))
    for _ in range(min(-net, len(regions))):
        regions.pop()


def read_ttgir(text: str, ops: tuple[str, ...] = SHARED_OPS) -> Module:
    """Read TTGIR text; ops outside ``ops`` (``SHARED_OPS``) are skipped."""
    if len(text) > MAX_TEXT:
        raise InputError("ttgir", "file", f"is larger than {MAX_TEXT} bytes", len(text))
    if not re.search(r"^\s*module\b", text, re.M):
        raise InputError("ttgir", "file", "is not TTGIR text (no 'module')")
    mod = Module()
    locs: dict[str, str] = {}
    lines = text.splitlines()
    for line in lines:
        a = ALIAS.match(line)
        if a:
            if a.group(2).startswith("loc("):
                locs[a.group(1)] = a.group(2)
            else:
                mod.aliases[a.group(1)] = a.group(2).strip()
    warps = re.search(r'"ttg\.num-warps"\s*=\s*(\d{1,9})', text)
    mod.num_warps = int(warps.group(1)) if warps else None
    target = re.search(r'ttg\.target\s*=\s*"([^"]+)"', text)
    mod.target = target.group(1) if target else None
    regions: list[tuple[list[str], bool]] = []  # per open region: an scf.for's carried values, whether one
    for no, line in enumerate(lines, 1):
        carried: list[str] = []
        if "iter_args(" in line:
            args = line.split("iter_args(", 1)[1]
            pairs = re.findall(r"(%[\w$.#-]+) = (%[\w$.#-]+)", args.split(") ->", 1)[0])
            mod.block_args.update(pairs)
            carried = [p[0] for p in pairs] if " scf.for " in line else []
        if "tt.func " in line and not mod.func_args:
            mod.func_args = re.findall(r"(%[\w$.#-]+):", line.split("(", 1)[-1])
        m = _OP.match(line)
        _track_regions(line, m, carried, regions, mod.yields)
        if m and m.group(1) and len(mod.defs) < MAX_DEFS:
            mod.defs[m.group(1)] = line.strip()
        if not m or m.group(2) not in ops:
            continue
        body, loc_text = trailing_loc(line.strip())
        head, _, type_text = body.partition(" : ")
        operands = re.findall(r"%[\w$.#-]+", head.split(m.group(2), 1)[1])
        mod.ops.append(
            Op(
                line=no,
                name=m.group(2),
                result=m.group(1),
                operands=operands,
                types=find_types(type_text),
                loc=_resolve_loc(loc_text, locs) if loc_text else None,
                text=line.strip(),
                name_loc=_resolve_name(loc_text, locs) if loc_text else None,
                loop_depth=sum(is_for for _, is_for in regions),
            )
        )
    return mod
