"""The accesses of a TTGIR module to its shared buffers (each with the root allocation it
touches), their layouts, the instructions Triton 3.9.0 lowers them with, and their exact counts
on the module's target.

>>> from bankproof.verifier.triton.ttgir import read_ttgir
>>> mod = read_ttgir(open(__file__.replace("accesses.py", "sample.ttgir")).read())
>>> [(a.op.name, a.kind, a.buffer) for a in buffer_accesses(mod)]
[('ttg.local_alloc', 'store', '%buf'), ('ttg.local_load', 'load', '%buf')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from bankproof.models import hardware, target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import parse_layout
from bankproof.models.target import Target
from bankproof.verifier.engine import tables
from bankproof.verifier.engine.answer import AccessProblem, answer, issued
from bankproof.verifier.triton.scan_records import AccessCount, Location
from bankproof.verifier.triton.ttgir import MMA_OPS, Module, Op, Type

WRITE_OPS = ("ttg.local_store", "ttg.async_copy_global_to_local")
VIEW_OPS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape")


@dataclass
class BufferAccess:
    op: Op
    kind: str  # store / load
    tensor: Type
    memdesc: Type
    buffer: str = ""  # the root allocation's SSA name


def buffer_accesses(mod: Module, find: Callable[[str], str] | None = None) -> list[BufferAccess]:
    """Every access, with the buffer (root allocation's SSA name, by ``find``: :func:`roots`) it
    touches, in program order."""
    find = find or roots(mod)
    out: list[BufferAccess] = []
    for op in mod.ops:
        tensors = [t for t in op.types if t.kind == "tensor"]
        mems = [t for t in op.types if t.kind == "memdesc"]
        if op.name == "ttg.local_alloc" and op.result:
            if op.operands and tensors and mems:
                out.append(BufferAccess(op, "store", tensors[0], mems[-1], find(op.result)))
        elif op.name in WRITE_OPS and len(op.operands) >= 2 and tensors and mems:
            out.append(BufferAccess(op, "store", tensors[0], mems[0], find(op.operands[1])))
        elif op.name == "ttg.local_load" and op.operands and tensors and mems:
            out.append(BufferAccess(op, "load", tensors[0], mems[0], find(op.operands[0])))
    return out


def roots(mod: Module) -> Callable[[str], str]:
    """The root allocation (SSA name) of a value: through views and loop-carried values."""
    root: dict[str, str] = {}
    for op in mod.ops:
        if op.name == "ttg.local_alloc" and op.result:
            root[op.result] = op.result
        elif op.name in VIEW_OPS and op.result and op.operands:
            root[op.result] = op.operands[0]

    def find(v: str) -> str:
        seen = set()
        while v not in seen:
            seen.add(v)
            nxt = root.get(v) or mod.block_args.get(v)
            if nxt is None or nxt == v:
                return v
            v = nxt
        return v

    return find


def dot_roles(mod: Module, find: Callable[[str], str]) -> Mapping[str, str]:
    """Which dot operand each buffer is (``A``, ``B``, or ``A+B``): an MMA op reads it as
    its first or second operand, or a ``local_load`` gives a ``dot_op`` operand from it."""
    seen: dict[str, set[str]] = {}
    for op in mod.ops:
        if op.name in MMA_OPS:
            for v, role in zip(op.operands[:2], "AB"):
                seen.setdefault(find(v), set()).add(role)
        elif op.name == "ttg.local_load" and op.operands and op.types:
            idx = _OP_IDX.search(resolved(mod, op.types[-1].encoding))
            if idx and idx.group(1) in "01":
                seen.setdefault(find(op.operands[0]), set()).add("AB"[int(idx.group(1))])
    return {b: "+".join(sorted(r)) for b, r in seen.items()}


_OP_IDX = re.compile(r"#ttg\.dot_op<\{opIdx = (\d)")


class BufferName(NamedTuple):
    """What the source calls a buffer (``None``: the TTGIR does not say) and the dot operand it is."""

    name: str | None
    role: str | None


def buffer_names(
    mod: Module, accesses: list[BufferAccess], find: Callable[[str], str]
) -> Mapping[str, BufferName]:
    """Each buffer's :class:`BufferName`: the name its allocation's location gives it (else the
    first of its accesses that has one), and :func:`dot_roles`'s role (``find``: :func:`roots`)."""
    roles = dot_roles(mod, find)
    allocs = {op.result: op.name_loc for op in mod.ops if op.name == "ttg.local_alloc" and op.result}
    out: dict[str, BufferName] = {}
    for a in accesses:
        named = allocs.get(a.buffer) or (out[a.buffer].name if a.buffer in out else None) or a.op.name_loc
        out[a.buffer] = BufferName(named, roles.get(a.buffer))
    return out


def sm_of(target: str | None) -> int:
    """The compute capability of a TTGIR ``ttg.target`` (``cuda:90`` -> 90; 0 when unknown)."""
    if target and target.startswith("cuda:") and target[5:].isdigit():
        return int(target[5:])
    return 0


def resolved(mod: Module, enc: str) -> str:
    """An encoding's own attribute text, through aliases (``#mma`` -> ``#ttg.nvidia_mma<...>``)."""
    for _ in range(8):
        name = enc.strip()[1:]
        if not enc.strip().startswith("#") or name not in mod.aliases:
            break
        enc = mod.aliases[name]
    return enc


def instr_candidates(
    acc: BufferAccess,
    bits: int,
    sm: int = 0,
    enc: str | None = None,
    t: Target | None = None,
    dist: LinearLayout | None = None,
) -> list[str]:
    """The instructions Triton 3.9.0 may lower an access with, in the order it prefers them; the
    first one the layout pair can deliver is counted (and checked against Triton's PTX).

    Stores of 16-bit mma tiles on sm90+ (a TMA store's epilogue tile, say) use ``stmatrix.x4``,
    as Triton's PTX shows (the corpus's lowering check holds it to that). A target without the
    matrix instructions (``t.matrix``) uses the widest legal vector."""
    if t is not None and not t.matrix:
        return ["auto"]
    if acc.op.name == "ttg.async_copy_global_to_local" and dist is not None:  # cp.async's width
        return [f"vector{copy_elements(acc.op.text, enc or acc.tensor.encoding, dist, bits)[1] * bits}"]
    return policy(acc.kind, bits, sm, enc or acc.tensor.encoding)


def policy(kind: str, bits: int, sm: int, enc: str) -> list[str]:
    """Triton 3.9.0's preference for a ``local_load`` (``kind`` ``load``) or a store into shared
    memory from registers of encoding ``enc`` (see :func:`instr_candidates`).

    >>> lay = "#ttg.blocked<{order = [1, 0]}>"
    >>> policy("store", 32, 90, lay)[:3], policy("load", 64, 90, lay), policy("store", 32, 80, lay)
    (['stsm.x4', 'stsm.x2', 'stsm.x1'], ['auto'], ['auto'])
    """
    if kind == "store" and sm >= 90 and bits == 16 and enc.startswith(("#ttg.nvidia_mma", "#ttg.linear")):
        return ["stsm.x4", "stsm.x4.trans", "stsm.x2", "stsm.x2.trans", "auto"]  # a warp tile of 16 x 8: x2
    if kind == "load" and "dot_op" in enc and bits in (8, 16, 32):
        if bits != 16:
            return ["ldsm.x4", "auto"]
        first, second = ("ldsm.x4.trans", "ldsm.x4") if "opIdx = 1" in enc else ("ldsm.x4", "ldsm.x4.trans")
        return [first, second, "auto"]
    return _matrix_first(kind, bits, sm) + ["auto"]


def _matrix_first(kind: str, bits: int, sm: int) -> list[str]:
    """Triton 3.9.0 lowers every ``local_load`` (sm75+) and ``local_store``/``local_alloc`` (sm90+)
    through ``lowerLdStMatrix`` first, whatever the register layout: ``ldmatrix``/``stmatrix``
    whenever the layout's 32-bit words come four lanes to a 16-byte row (non-transposed, 8 to 32
    bits) or, for 16-bit elements, transposed; as many matrices per instruction as the thread's
    registers fill, up to four. The count tries the widest first, then the ld/st vector."""
    if bits not in (8, 16, 32) or (kind == "load" and sm < 75) or (kind == "store" and sm < 90):
        return []
    op = "ldsm" if kind == "load" else "stsm"
    out = [f"{op}.x{n}" for n in (4, 2, 1)]
    return out + ([f"{op}.x{n}.trans" for n in (4, 2, 1)] if bits == 16 else [])


def copy_contiguity(text: str) -> int:
    """The elements one ``cp.async`` may copy at most: the ``contiguity`` Triton's axis analysis
    wrote on the ``async_copy_global_to_local`` (1, the attribute's default, when absent). Triton
    3.9.0 copies min(contiguity, what the register and shared layouts vectorize) elements.

    >>> copy_contiguity("async_copy_global_to_local %a, %b {contiguity = 8 : i32}"), copy_contiguity("")
    (8, 1)
    """
    m = re.search(r"\bcontiguity\s*=\s*(\d{1,4})", text)
    return max(1, int(m.group(1))) if m else 1


def copy_elements(op_text: str, enc: str, dist: LinearLayout, bits: int) -> tuple[int, int]:
    """The elements one ``cp.async`` of Triton 3.9.0 copies, as ``(least, most)``: its lowering takes
    ``max(contiguity attribute, min(alignment, contiguous elements per thread along order[0],
    128 bits))``; the layout gives the per-thread run (the leading register bases along ``order[0]``),
    the op its ``contiguity``; the pointers' alignment (axis analysis) is not in the TTGIR, so the
    most assumes it allows the run.

    >>> lay = LinearLayout.from_bases({"register": [[0, 1], [0, 2]], "lane": []}, {"dim0": 1, "dim1": 4})
    >>> copy_elements("{contiguity = 2 : i32}", "#ttg.blocked<{order = [1, 0]}>", lay, 16)
    (2, 4)
    """
    regs = dist.in_bases("register")
    rank = len(dist.out_dim_names)
    first = copy_order0(enc, dist)
    run = 1
    for b in regs:
        if list(b) != [run if d == first else 0 for d in range(rank)]:
            break
        run *= 2
    most = max(1, min(run, 128 // bits))
    least = min(copy_contiguity(op_text), 128 // bits)
    return least, max(least, most)


def copy_order0(enc: str, dist: LinearLayout) -> int:
    """The pointer layout's contiguous dim, ``order[0]``: the encoding's ``order``, else the dim of
    its first register basis, else the last dim."""
    m = re.search(r"order\s*=\s*\[\s*(\d+)", enc)
    if m:
        return int(m.group(1))
    regs = dist.in_bases("register")
    rank = len(dist.out_dim_names)
    return next((d for d in range(rank) if regs and regs[0][d]), rank - 1)


def copy_read_wavefronts(dist, enc: str, vec: int, bits: int, stride: int | None = 1) -> int:
    """The most wavefronts one warp's copy of ``vec`` elements per lane can cost on its global
    side when the rows of the tile (coordinates off the contiguous dim ``order[0]``) lie at
    global offsets the TTGIR does not give: the global data passes L1's banks, where lanes reading
    one bank of different 128-byte lines conflict (``models.copy_rule.ldgsts_wavefronts``); at worst
    every row starts in the same bank (lanes that repeat another lane's elements copy nothing).
    ``stride``: the global element stride along ``order[0]``
    (:mod:`~bankproof.verifier.triton.strides`); ``None`` when it is a runtime value, so that each
    lane's elements may lie anywhere (every lane its own row).

    >>> a = LinearLayout.from_bases({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]},
    ...                             {"dim0": 8, "dim1": 8})
    >>> enc = "#ttg.blocked<{order = [1, 0]}>"
    >>> copy_read_wavefronts(a, enc, 2, 16), copy_read_wavefronts(a, enc, 2, 16, None)
    (8, 32)
    >>> copy_read_wavefronts(a, enc, 2, 16, 3)  # 12-byte steps within a row: banks still differ
    8
    """
    first = copy_order0(enc, dist)
    at = dist.apply_arrays(lane=np.arange(hardware.LANES))  # each lane's coordinate (register 0)
    coords = list(zip(*(at[d].tolist() for d in dist.out_dim_names), strict=True))
    row_of: dict[tuple, int] = {}
    addr = np.zeros(hardware.LANES, dtype=np.int64)
    first_of = {c: lane for lane, c in reversed(list(enumerate(coords)))}
    issues = np.array([first_of[c] == lane for lane, c in enumerate(coords)])  # a repeat copies nothing
    span = 1 << 24  # rows apart by a multiple of every bank period: all start in one bank
    for lane, c in enumerate(coords):
        key = tuple(x for d, x in enumerate(c) if d != first)
        x = c[first]
        if stride is None:
            key, x = (key, x), 0
        row = row_of.setdefault(key, len(row_of))
        addr[lane] = row * span + x * abs(stride or 1) * bits // 8
    width = vec * bits // 8
    if width not in (4, 8, 16):
        return 0
    return tables.reads(width, addr, issues)


def count_access(
    dist: LinearLayout,
    memory,
    bits: int,
    kind: str,
    candidates: list[str],
    arch: str | Target = DEFAULT_ARCH,
    copy: bool = False,
    engines: tuple[str, ...] = (),
    timeout_s: float = 10.0,
) -> AccessCount:
    """The first deliverable instruction's exact counts on the target; ``copy``: a ``cp.async``,
    which only the lanes of :func:`~bankproof.verifier.engine.answer.issuers` issue; ``engines``:
    those to run beside the count (none: counted only)."""
    return count_cached(
        dist, memory, bits, kind, tuple(candidates), target.get(arch), copy, engines, timeout_s
    )


@lru_cache(maxsize=1024)
def count_cached(
    dist: LinearLayout,
    memory,
    bits: int,
    kind: str,
    candidates: tuple[str, ...],
    t: Target | None = None,
    copy: bool = False,
    engines: tuple[str, ...] = (),
    timeout_s: float = 10.0,
) -> AccessCount:
    """Memoized: a pipelined loop repeats the same access (prologue, body, epilogue). The access is
    one problem (its instruction the first candidate the pair delivers) the engine answers, counted
    only; a lane-group target's count it cannot give is an error naming the rule."""
    t = t or target.get(DEFAULT_ARCH)
    if not candidates:
        raise InputError("ttgir", "access", "has no instruction")
    p = AccessProblem(memory, dist, bits, kind, t.arch, ",".join(candidates), free_lanes_off=copy)
    got = answer(p, engines, timeout_s)  # a lane-group count the rule cannot give: unknown, rule named
    live, every_lane = issued(p) if copy else (None, True)
    if every_lane:
        return AccessCount(answer=got)
    every = answer(replace(p, free_lanes_off=False), ())
    return AccessCount(answer=got, live_instructions=live, redundant=REDUNDANT_NOTE,
                       unguarded_wavefronts=every.wavefronts)  # fmt: skip


REDUNDANT_NOTE = (
    "Triton predicates off the lanes and warps that hold copies of others' elements "
    "(free variables of the layout): they issue no wavefronts, and ncu's ldgsts "
    "instructions count only warps with a lane on"
)


def provenance(op: str, instr: str) -> str:
    """How the count of one access is backed: ``measured`` (the hardware model's instructions, and
    Triton's ``cp.async.ca`` copies, which cost their store when their global reads are coalesced)
    or ``assumed`` (16-byte ``cp.async.cg``: Nsight Compute counts no shared wavefronts for it; timed,
    it is fastest conflict-free and many times slower with conflicts than its store count says)."""
    if op == "ttg.async_copy_global_to_local" and instr == "st128":
        return "assumed"
    return "measured"


@lru_cache(maxsize=512)
def parse_cached(text: str, shape: tuple[int, ...]) -> LinearLayout | PaddedLayout:
    """``parse_layout`` memoized: a kernel names the same few layouts many times."""
    return parse_layout(text, list(shape)).layout


def layouts_of(mod: Module, acc: BufferAccess) -> tuple[LinearLayout, LinearLayout | PaddedLayout]:
    """The access's distributed layout and the memory layout it goes through. A subslice view
    (``alloc_shape`` written) is placed at the origin of its allocation: a linear memory layout maps
    a shifted block to the same offsets XOR a constant, which keeps every bank-conflict count."""
    view = list(acc.memdesc.shape)
    full = list(acc.memdesc.alloc_shape) or view
    dist = parse_cached(mod.expand(acc.tensor.encoding), tuple(acc.tensor.shape))
    memory = parse_cached(mod.expand(acc.memdesc.encoding), tuple(full))
    if full != view:
        if len(full) != len(view) or not isinstance(memory, LinearLayout):
            raise InputError(
                "ttgir", "memdesc", "is a view of a padded or other-rank buffer", acc.memdesc.text
            )
        dims = {name: size for (name, _), size in zip(dist.out_dims, full, strict=True)}
        dist = LinearLayout.from_bases(dist.as_dict(), dims)
    return dist, memory


def location(op: Op, path: str) -> Location:
    """Where ``op`` is: its TTGIR line in ``path`` and its Python source when the TTGIR says."""
    extra = {"name": op.name_loc, "loop_depth": op.loop_depth or None}
    if op.loc:
        return Location(
            ttgir=path, ttgir_line=op.line, source=op.loc[0], line=op.loc[1], column=op.loc[2], **extra
        )
    return Location(ttgir=path, ttgir_line=op.line, **extra)
