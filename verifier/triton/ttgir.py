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
from dataclasses import dataclass, field, replace

from bankproof.models import dtypes
from bankproof.models.errors import InputError

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
MAX_TEXT = 64 * 1024 * 1024

_ALIAS = re.compile(r"^#([\w$.-]+)\s*=\s*(.*)$")
_OP = re.compile(r"^\s*(?:(%[\w$.#-]+)(?::\d+)?\s*=\s*)?([a-z_]+\.[a-z_.]+)\b(.*)$")
_LOC_FILE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_LOC_REF = re.compile(r"#(loc\d*)\b")


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


@dataclass
class Module:
    aliases: dict[str, str] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    block_args: dict[str, str] = field(default_factory=dict)  # loop-carried value -> initial value
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


def split_top(text: str) -> list[str]:
    """Split at the commas outside any bracket (``<>``, ``[]``, ``()``, ``{}``)."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<[({":
            depth += 1
        elif c in ">])}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur).strip())
    return parts


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
        m = re.match(r"(\d+)x", elem)
        if not m:
            break
        dims.append(int(m.group(1)))
        elem = elem[m.end() :]
    ptr = re.fullmatch(r"!tt\.ptr<(\w+)(?:,.*)?>", elem)
    if ptr:
        elem = ptr.group(1)
    encoding = parts[1] if len(parts) > 1 else ""
    alloc = next((p for p in parts[2:] if re.fullmatch(r"\d+(?:x\d+)*", p)), "")
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
    m = _LOC_FILE.search(ref)
    if m:
        return (m.group(1), int(m.group(2)), int(m.group(3)))
    if depth > 32:
        return None
    for r in _LOC_REF.findall(ref):
        if r in locs:
            found = _resolve_loc(locs[r], locs, depth + 1)
            if found:
                return found
    return None


def _trailing_loc(text: str) -> tuple[str, str]:
    """Split an op's text into its body and its trailing ``loc(...)``."""
    i = text.rfind(" loc(")
    if i < 0:
        return text, ""
    return text[:i], text[i + 1 :]


def read_ttgir(text: str) -> Module:
    """Read TTGIR text; ops outside ``SHARED_OPS`` are skipped."""
    if len(text) > MAX_TEXT:
        raise InputError("ttgir", "file", f"is larger than {MAX_TEXT} bytes", len(text))
    if not re.search(r"^\s*module\b", text, re.M):
        raise InputError("ttgir", "file", "is not TTGIR text (no 'module')")
    mod = Module()
    locs: dict[str, str] = {}
    lines = text.splitlines()
    for line in lines:
        a = _ALIAS.match(line)
        if a:
            if a.group(2).startswith("loc("):
                locs[a.group(1)] = a.group(2)
            else:
                mod.aliases[a.group(1)] = a.group(2).strip()
    warps = re.search(r'"ttg\.num-warps"\s*=\s*(\d+)', text)
    mod.num_warps = int(warps.group(1)) if warps else None
    target = re.search(r'ttg\.target\s*=\s*"([^"]+)"', text)
    mod.target = target.group(1) if target else None
    for no, line in enumerate(lines, 1):
        if "iter_args(" in line:
            args = line.split("iter_args(", 1)[1]
            mod.block_args.update(re.findall(r"(%[\w$.#-]+) = (%[\w$.#-]+)", args.split(") ->", 1)[0]))
        m = _OP.match(line)
        if not m or m.group(2) not in SHARED_OPS:
            continue
        body, loc_text = _trailing_loc(line.strip())
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
            )
        )
    return mod


# ----- every op, with its loop nest (the whole-kernel ledger) ----------------------------------
_ANY_OP = re.compile(r'^\s*(?:(%[\w$.#-]+)(?::\d+)?\s*=\s*)?"?([a-z_]+\.[a-z_0-9.]+)"?')
_SCALAR = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*arith\.(\w+)\s+(%[\w$.#-]+),\s*(%[\w$.#-]+)\s*:\s*i\d+\s")
_INT_OPS = {
    "addi": lambda a, b: a + b, "subi": lambda a, b: a - b, "muli": lambda a, b: a * b,
    "divsi": lambda a, b: int(a / b) if b else None, "divui": lambda a, b: a // b if b else None,
    "ceildivsi": lambda a, b: -(-a // b) if b else None,
    "remsi": lambda a, b: a - int(a / b) * b if b else None,
    "maxsi": max, "minsi": min, "andi": lambda a, b: a & b, "ori": lambda a, b: a | b,
    "shli": lambda a, b: a << b, "shrsi": lambda a, b: a >> b,
}  # fmt: skip
_GRID = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*tt\.get_(program_id|num_programs)\s+([xyz])\b")
_FOR = re.compile(r"scf\.for\s+(%[\w$.#-]+)\s*=\s*(\S+)\s+to\s+(\S+)\s+step\s+(\S+)")
_CONST = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*i\d+")
_PARTITION = re.compile(r"partition(\d+)\s*\(.*?\)\s*num_warps\((\d+)\)")


@dataclass(frozen=True)
class Loop:
    """An ``scf.for`` with its bounds: integers where the TTGIR has constants, else SSA names
    (kernel arguments such as ``%K`` can be given values later).

    >>> Loop(3, "0", "%K", "32").trips({"K": 100}), Loop(3, "0", "128", "32").trips()
    (4, 4)
    """

    line: int
    lower: str
    upper: str
    step: str
    defs: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # scalar arith

    def _value(self, v: str, args: dict[str, int] | None, depth: int = 0) -> int | None:
        if v.lstrip("-").isdigit():
            return int(v)
        if args and v.lstrip("%") in args:
            return int(args[v.lstrip("%")])
        if v in self.defs and depth < 32:
            op, a, b = self.defs[v]
            x, y = self._value(a, args, depth + 1), self._value(b, args, depth + 1)
            return None if x is None or y is None else _INT_OPS[op](x, y)
        return None

    def trips(self, args: dict[str, int] | None = None) -> int | None:
        vals = [self._value(v, args) for v in (self.lower, self.upper, self.step)]
        if any(v is None for v in vals):
            return None
        lo, hi, st = vals
        return max(0, -(-(hi - lo) // st)) if st > 0 else None

    def text(self) -> str:
        return f"for {self.lower} to {self.upper} step {self.step} (TTGIR line {self.line})"


@dataclass(frozen=True)
class Site:
    """One TTGIR op: its name, the kernel source location it comes from (the outermost caller of
    an inlined chain, as the PTX's ``inlined_at`` names it), its loops and warp partition."""

    line: int
    name: str
    site: tuple[str, int, int] | None
    loops: tuple[Loop, ...]
    partition: tuple[int, int] | None = None  # (index, num_warps) inside ttg.warp_specialize
    text: str = ""
    chain: tuple = field(default=(), compare=False)  # every location of its callsite chain, innermost first


def _loc_chain(ref: str, locs: dict[str, str], depth: int = 0) -> tuple[tuple[str, int, int], ...]:
    """Every ``file:line:col`` of a location, innermost first: ``callsite(callee at caller)`` gives
    the callee's chain, then the caller's."""
    if depth > 32:
        return ()
    ref = ref.strip()
    if ref.startswith("loc("):
        ref = ref[4:-1] if ref.endswith(")") else ref[4:]
    if ref.startswith("callsite("):
        inner = ref[len("callsite(") :].rstrip(")")
        depth_, cut = 0, -1
        for i, c in enumerate(inner):
            depth_ += c in "(["
            depth_ -= c in ")]"
            if depth_ == 0 and inner.startswith(" at ", i):
                cut = i
        if cut >= 0:
            return _loc_chain(inner[:cut], locs, depth + 1) + _loc_chain(inner[cut + 4 :], locs, depth + 1)
    m = _LOC_FILE.match(ref) or _LOC_FILE.match(f"loc({ref}")
    if m:
        return ((m.group(1).rsplit("/", 1)[-1], int(m.group(2)), int(m.group(3))),)
    for r in _LOC_REF.findall(ref):
        if r in locs:
            return _loc_chain(locs[r], locs, depth + 1)
    m = _LOC_FILE.search(ref)
    return ((m.group(1).rsplit("/", 1)[-1], int(m.group(2)), int(m.group(3))),) if m else ()


def read_sites(text: str) -> tuple[list[Site], dict[str, int], list[str]]:
    """Every op of a TTGIR module with its loop nest; the integer constants; the kernel's
    argument names (``tt.func`` parameters, in order).

    >>> sites, consts, args = read_sites('''module {
    ...   tt.func public @k(%K: i32 loc("K"(#loc))) {
    ...     %c0 = arith.constant 0 : i32 loc(#loc1)
    ...     %c32 = arith.constant 32 : i32 loc(#loc1)
    ...     %r = scf.for %i = %c0 to %K step %c32 iter_args(%a = %c0) -> (i32) : i32 {
    ...       %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ...       ^bb0(%p: f32, %q: f32):
    ...         tt.reduce.return %p : f32 loc(#loc1)
    ...       }) : (tensor<4xf32>) -> f32 loc(#loc2)
    ...       scf.yield %a : i32 loc(#loc1)
    ...     } loc(#loc1)
    ...   } loc(#loc)
    ... } loc(#loc)
    ... #loc = loc("k.py":1:0)
    ... #loc1 = loc(unknown)
    ... #loc2 = loc(callsite(#loc3 at #loc4))
    ... #loc3 = loc("standard.py":9:1)
    ... #loc4 = loc("k.py":7:5)''')
    >>> red = next(s for s in sites if s.name == "tt.reduce")
    >>> red.site, [lp.trips({"K": 64}) for lp in red.loops], args
    (('k.py', 7, 5), [2], ['K'])
    """
    locs: dict[str, str] = {}
    lines = text.splitlines()
    for line in lines:
        a = _ALIAS.match(line)
        if a and a.group(2).startswith("loc("):
            locs[a.group(1)] = a.group(2)
    consts: dict[str, int] = {}
    scalar: dict[str, tuple[str, str, str]] = {}
    args: list[str] = []
    sites: list[Site] = []
    stack: list[tuple[str, object, int | None]] = []  # (kind, Loop | partition | None, open site)
    closed: int | None = None  # the region op whose region a bare ``}`` just closed
    captures: dict[int, list[str]] = {}  # ttg.warp_specialize site -> its operands
    for no, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith(("#", "^", "//")):
            continue
        c = _CONST.match(line)
        if c:
            consts[c.group(1)] = int(c.group(2))
        g = _GRID.match(line)
        if g:  # a launch value: given as args["program_id_x"], args["num_programs_x"], ...
            scalar[g.group(1)] = ("addi", f"%{g.group(2)}_{g.group(3)}", "0")
        d = _SCALAR.match(line)
        if d and d.group(2) in _INT_OPS:
            scalar[d.group(1)] = (d.group(2), str(consts.get(d.group(3), d.group(3))),
                                  str(consts.get(d.group(4), d.group(4))))  # fmt: skip
        if s.startswith("tt.func"):
            args = re.findall(r"%([\w$.-]+):", s.split("(", 1)[1]) if "(" in s else []
        if s.startswith("}"):
            kind, _, opened = stack.pop() if stack else ("", None, None)
            if s.rstrip().endswith("{"):  # the op's next region (``} else {``, ``} partition1(...) {``)
                p = _PARTITION.search(s)
                part = (int(p.group(1)), int(p.group(2))) if p else None
                stack.append(("partition" if p else "block", part, opened))
            elif opened is not None:  # a region op's location is written after its regions
                body, loc_text = _trailing_loc(s)
                old = sites[opened]
                chain = _loc_chain(loc_text, locs) if loc_text else old.chain
                sites[opened] = replace(old, site=chain[-1] if chain else old.site, chain=chain)
                closed = opened if s == "}" else None
            continue
        if s == "default {" and sites and sites[-1].name == "ttg.warp_specialize":
            stack.append(("block", None, len(sites) - 1))  # its regions open on the next line
            continue
        p = _PARTITION.match(s)
        if p and s.endswith("{"):  # ``partitionN(...) num_warps(W) {`` after a bare ``}``
            if closed is not None:  # its arguments are the op's operands, in order
                operands = captures.get(closed, [])
                params = re.findall(r"(%[\w$.#-]+):", s.split("(", 1)[1])
                for name, value in zip(params, operands, strict=False):
                    scalar[name] = ("addi", str(consts.get(value, value)), "0")
            stack.append(("partition", (int(p.group(1)), int(p.group(2))), closed))
            closed = None
            continue
        closed = None
        m = _ANY_OP.match(line)
        loops = tuple(v for k, v, _ in stack if k == "loop")
        parts = [v for k, v, _ in stack if k == "partition"]
        added = bool(m and m.group(2) not in ("tt.func", "module"))
        if added:
            body, loc_text = _trailing_loc(s)
            chain = _loc_chain(loc_text, locs) if loc_text else ()
            if m.group(2) == "ttg.warp_specialize" and "(" in s:
                captures[len(sites)] = re.findall(r"%[\w$.#-]+", s.split("(", 1)[1].split(")", 1)[0])
            sites.append(Site(no, m.group(2), chain[-1] if chain else None, loops,
                              parts[-1] if parts else None, s[:200], chain))  # fmt: skip
        if s.rstrip().endswith("{"):
            f = _FOR.search(s)
            if f:
                lo, hi, st = (str(consts.get(v, v)) for v in f.groups()[1:])
                stack.append(("loop", Loop(no, lo, hi, st, scalar), len(sites) - 1 if added else None))
            else:
                p = _PARTITION.search(s)
                kind = "partition" if p else "block"
                part = (int(p.group(1)), int(p.group(2))) if p else None
                stack.append((kind, part, len(sites) - 1 if added else None))
    return sites, consts, args
