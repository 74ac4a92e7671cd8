"""Every op of a TTGIR module with its loop nest, source location chain and warp-specialize
partition (what the whole-kernel ledger attributes PTX to), and the ``scf.for`` trip counts the
module's constants and the kernel's arguments decide.

>>> sites, _, args = read_sites('''module {
...   tt.func public @k(%K: i32) {
...     %c0 = arith.constant 0 : i32
...     %c1 = arith.constant 1 : i32
...     scf.for %i = %c0 to %K step %c1 : i32 {
...       %v = ttg.local_load %a : !ttg.memdesc<16xf32, #s> -> tensor<16xf32, #b>
...     }
...   }
... }''')
>>> [(s.name, len(s.loops)) for s in sites if s.name == "ttg.local_load"], args
([('ttg.local_load', 1)], ['K'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from bankproof.verifier.results import FrozenMap
from bankproof.verifier.triton.scalars import INT_OPS, Cond, unknown_why, value
from bankproof.verifier.triton.ttgir import ALIAS, LOC_FILE, LOC_REF, trailing_loc

_ANY_OP = re.compile(r'^\s*(?:(%[\w$.#-]+)(?::\d+)?\s*=\s*)?"?([a-z_]+\.[a-z_0-9.]+)"?')
_SCALAR = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*arith\.(\w+)\s+(%[\w$.#-]+),\s*(%[\w$.#-]+)\s*:\s*i\d+\s")
_GRID = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*tt\.get_(program_id|num_programs)\s+([xyz])\b")
_FOR = re.compile(r"scf\.for\s+(%[\w$.#-]+)\s*=\s*(\S+)\s+to\s+(\S+)\s+step\s+(\S+)")
_CONST = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*arith\.constant\s+(-?\d{1,19})\s*:\s*i\d+")
_CMPI = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*arith\.cmpi\s+(\w+),\s*(%[\w$.#-]+),\s*(%[\w$.#-]+)\s*:\s*i\d+\s")
_LOAD = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*tt\.load\s+(%[\w$.#-]+)[^:]*:\s*!tt\.ptr<i\d+>")
_ADDPTR = re.compile(r"^\s*(%[\w$.#-]+)\s*=\s*tt\.addptr\s+(%[\w$.#-]+),\s*(%[\w$.#-]+)\s*:\s*!tt\.ptr<")
_IF = re.compile(r"scf\.if\s+(%[\w$.#-]+)")
_WHILE = re.compile(r"=\s*scf\.while\b")
_ITER_ARG = re.compile(r"(%[\w$.#-]+)\s*=\s*(%?[\w$.#-]+)")
_V = r"(%[\w$.#-]+)"
_UNARY = re.compile(rf"^\s*{_V}\s*=\s*arith\.(?:extui|extsi|trunci|index_cast|index_castui)\s+{_V}\s")
_SELECT = re.compile(rf"^\s*{_V}\s*=\s*arith\.select\s+{_V},\s*{_V},\s*{_V}\s*:\s*i\d+\s")
_COND_BR = re.compile(r"^\s*cf\.cond_br\s+(%[\w$.#-]+),\s*(\^\w+)(?:\([^)]*\))?,\s*(\^\w+)")
_PARTITION = re.compile(r"partition(\d{1,9})\s*\(.*?\)\s*num_warps\((\d{1,9})\)")


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
    carried: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # name: (init, yield)
    kind: str = field(default="for", compare=False)  # "while": an scf.while (its "do" region's trips)

    def trips(self, args: dict[str, int] | None = None) -> int | None:
        """The trip count from the bounds, else the value given as ``trips_L<line>`` (a count the
        arguments cannot decide: a bound loaded from memory), else None."""
        vals = [value(v, args, self.defs) for v in (self.lower, self.upper, self.step)]
        if any(v is None for v in vals):
            return (args or {}).get(self.unknown)
        lo, hi, st = vals
        return max(0, -(-(hi - lo) // st)) if st > 0 else None

    @property
    def unknown(self) -> str:
        """The name its trip count goes by in a formula, and the ``--arg`` that gives it."""
        return f"trips_L{self.line}"

    def text(self) -> str:
        if self.kind == "while":
            return f"while (TTGIR line {self.line})"
        return f"for {self.lower} to {self.upper} step {self.step} (TTGIR line {self.line})"

    def why(self, args: dict[str, int] | None = None) -> str | None:
        """Why the trip count is not decided (a bound loaded from memory, an argument not given)."""
        if self.kind == "while":
            return (
                None
                if self.trips(args) is not None
                else "an scf.while: its condition is evaluated at run time"
            )
        whys = (unknown_why(v, args, self.defs) for v in (self.lower, self.upper, self.step))
        return next((w for w in whys if w), None)


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
    conds: tuple[Cond, ...] = field(default=(), compare=False)  # the branch arms it runs under
    in_while_cond: bool = field(default=False, compare=False)  # in an scf.while's condition region


def _chain_once(ref: str, locs: dict[str, str], chains: dict[str, tuple]) -> tuple:
    """:func:`_loc_chain`, read once per location text of a module (``chains``: what was read)."""
    if ref not in chains:
        chains[ref] = _loc_chain(ref, locs)
    return chains[ref]


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
    m = LOC_FILE.match(ref) or LOC_FILE.match(f"loc({ref}")
    if m:
        return ((m.group(1).rsplit("/", 1)[-1], int(m.group(2)), int(m.group(3))),)
    for r in LOC_REF.findall(ref):
        if r in locs:
            return _loc_chain(locs[r], locs, depth + 1)
    m = LOC_FILE.search(ref)
    return ((m.group(1).rsplit("/", 1)[-1], int(m.group(2)), int(m.group(3))),) if m else ()


def read_sites(text: str) -> tuple[list[Site], Mapping[str, int], list[str]]:
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
        a = ALIAS.match(line)
        if a and a.group(2).startswith("loc("):
            locs[a.group(1)] = a.group(2)
    consts: dict[str, int] = {}
    scalar: dict[str, tuple[str, str, str]] = {}
    args: list[str] = []
    sites: list[Site] = []
    stack: list[tuple[str, object, int | None]] = []  # (kind, Loop | partition | None, open site)
    closed: int | None = None  # the region op whose region a bare ``}`` just closed
    captures: dict[int, list[str]] = {}  # ttg.warp_specialize site -> its operands
    arm_of: dict[str, Cond] = {}  # a cf.cond_br target block -> the arm it is
    block: tuple[Cond, ...] = ()  # the function-level block's arm (after an early return's branch)
    chains: dict[str, tuple] = {}  # a location's chain, read once per location text
    for no, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith("scf.yield") and stack and stack[-1][0] == "loop":  # the loop's carried values
            _yields(stack[-1][1], s)
        if len(stack) == 2:  # the function body: its blocks and branches
            block = _function_block(s, arm_of, block, scalar)
        if not s or s.startswith(("#", "^", "//")):
            continue
        _scalar_def(line, consts, scalar)
        if s.startswith("tt.func"):
            args = re.findall(r"%([\w$.-]+):", s.split("(", 1)[1]) if "(" in s else []
            scalar.update({f"%{a}": ("arg", a, "") for a in args})
        if s.startswith("}"):
            kind, was, opened = stack.pop() if stack else ("", None, None)
            if s.rstrip().endswith("{") and kind == "if" and "else" in s:  # scf.if's else region
                stack.append(("if", Cond(was.name, False, scalar), opened))
            elif s.rstrip().endswith("{") and kind == "while" and s.startswith("} do"):  # the body
                stack.append(("loop", was, opened))
            elif s.rstrip().endswith("{"):  # the op's next region (``} partition1(...) {``)
                p = _PARTITION.search(s)
                part = (int(p.group(1)), int(p.group(2))) if p else None
                stack.append(("partition" if p else "block", part, opened))
            elif opened is not None:  # a region op's location is written after its regions
                body, loc_text = trailing_loc(s)
                old = sites[opened]
                chain = _chain_once(loc_text, locs, chains) if loc_text else old.chain
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
        loops = tuple(v for k, v, _ in stack if k in ("loop", "while"))
        parts = [v for k, v, _ in stack if k == "partition"]
        added = bool(m and m.group(2) not in ("tt.func", "module"))
        if added:
            body, loc_text = trailing_loc(s)
            chain = _chain_once(loc_text, locs, chains) if loc_text else ()
            if m.group(2) == "ttg.warp_specialize" and "(" in s:
                captures[len(sites)] = re.findall(r"%[\w$.#-]+", s.split("(", 1)[1].split(")", 1)[0])
            conds = block + tuple(v for k, v, _ in stack if k == "if")
            cond = any(k == "while" for k, _, _ in stack)  # a while's condition runs once more than its body
            sites.append(Site(no, m.group(2), chain[-1] if chain else None, loops,
                              parts[-1] if parts else None, s[:200], chain, conds, cond))  # fmt: skip
        if s.rstrip().endswith("{"):
            stack.append((*_region(s, no, consts, scalar), len(sites) - 1 if added else None))
    return sites, FrozenMap(consts), args


def _region(s: str, no: int, consts: dict[str, int], scalar: dict) -> tuple[str, object]:
    """The region a line ending in ``{`` opens: an ``scf.for`` (its bounds and carried values), an
    ``scf.if``'s then arm, a warp-specialize partition, or another block."""
    f, i = _FOR.search(s), _IF.search(s)
    if i and not f:
        return "if", Cond(i.group(1), True, scalar)
    if _WHILE.search(s) and not f:  # its "before" region; ``} do {`` opens the body (same loop)
        return "while", Loop(no, "?", "?", "1", scalar, kind="while")
    if f:
        lo, hi, st = (str(consts.get(v, v)) for v in f.groups()[1:])
        loop = Loop(no, lo, hi, st, scalar)
        for name, init in _ITER_ARG.findall(s.split("iter_args(", 1)[1] if "iter_args(" in s else ""):
            loop.carried[name] = (str(consts.get(init, init)), None)
        return "loop", loop
    p = _PARTITION.search(s)
    return ("partition", (int(p.group(1)), int(p.group(2)))) if p else ("block", None)


def _yields(loop: Loop, s: str) -> None:
    """An ``scf.yield`` closing ``loop``'s body: each carried value's next value."""
    vals = re.findall(r"%[\w$.#-]+", s.split(":", 1)[0][len("scf.yield") :])
    for (name, (init, _)), v in zip(list(loop.carried.items()), vals, strict=False):
        loop.carried[name] = (init, v)


def _scalar_def(line: str, consts: dict[str, int], scalar: dict) -> None:
    """Record a scalar definition (a constant, a launch value, integer arithmetic, a comparison, a
    scalar ``tt.load``) for the evaluator of :mod:`~bankproof.verifier.triton.scalars`."""
    c = _CONST.match(line)
    if c:
        consts[c.group(1)] = int(c.group(2))
    g = _GRID.match(line)
    if g:  # a launch value: given as args["program_id_x"], args["num_programs_x"], ...
        scalar[g.group(1)] = ("addi", f"%{g.group(2)}_{g.group(3)}", "0")
    d = _SCALAR.match(line)
    if d and d.group(2) in INT_OPS:
        scalar[d.group(1)] = (d.group(2), str(consts.get(d.group(3), d.group(3))),
                              str(consts.get(d.group(4), d.group(4))))  # fmt: skip
    k = _CMPI.match(line)
    if k:
        scalar[k.group(1)] = (f"cmpi_{k.group(2)}", str(consts.get(k.group(3), k.group(3))),
                              str(consts.get(k.group(4), k.group(4))))  # fmt: skip
    ld = _LOAD.match(line)
    if ld:
        scalar[ld.group(1)] = ("load", ld.group(2), "")
    ap = _ADDPTR.match(line)
    if ap:  # a scalar pointer: which argument's buffer a scalar load reads (fill_<arg> gives its values)
        scalar[ap.group(1)] = ("addptr", ap.group(2), str(consts.get(ap.group(3), ap.group(3))))
    u = _UNARY.match(line)
    if u:  # a width change: the same integer (an i1 widened stays 0 or 1)
        scalar[u.group(1)] = ("addi", u.group(2), "0")
    sel = _SELECT.match(line)
    if sel:
        scalar[sel.group(1)] = ("select", sel.group(2), *(str(consts.get(x, x)) for x in sel.group(3, 4)))


def _function_block(s: str, arm_of: dict[str, Cond], block: tuple[Cond, ...], scalar: dict) -> tuple:
    """The arm the current function-level block runs under: a ``cf.cond_br`` records its two
    targets' arms; a block label with one predecessor that is such a target takes its arm (the
    rest of a kernel after an early ``return``); any other label none."""
    b = _COND_BR.match(s)
    if b:
        arm_of[b.group(2)] = Cond(b.group(1), True, scalar)
        arm_of[b.group(3)] = Cond(b.group(1), False, scalar)
    if not s.startswith("^"):
        return block
    label = re.match(r"\^\w+", s).group(0)
    return (arm_of[label],) if label in arm_of and "preds" not in s else ()
