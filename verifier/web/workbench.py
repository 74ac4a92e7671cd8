"""The workbench's answers (``bankproof serve``): one JSON request in, one JSON answer out, no
state kept between requests. The page sends the problem as the user wrote it (any notation the
command accepts) plus the toggle grid; every toggle is answered by the enumeration engine and
the algebra (Lemma 9.4), fast; Z3, synthesis and the §5.4 steps are separate requests.

**The toggle grid** (seed 000, for any linear memory layout). Offset bits split, by the byte
address bit they drive, into word bits (within a 4-byte bank word), bank bits (which of the 32
banks) and segment bits (which 128-byte row). Let ``c_k`` be the tensor coordinate that offset
bit ``k`` reaches. Toggling cell ``(i, j)`` (segment bit ``i``, bank bit ``j``) XORs segment bit
``i``'s value into bank bit ``j`` of every address, which is ``c_seg_i ^= c_bank_j``. Toggles
commute and each is its own inverse, so a layout is a *base* plus a 0/1 grid ``K``: ``c_seg_i =
base_i ^ XOR_j K[i][j] c_bank_j``, where ``base_i`` is ``c_seg_i`` reduced against the bank
columns (zero at their pivots). Every loaded layout decomposes this way, uniquely; the seeds'
unswizzled 16x32 transpose has ``K = 0`` and ``n ^ m`` has ``K = I``. Each toggle is one term of
the XOR swizzle pictured in :data:`bankproof.models.swizzle.SWIZZLE_DIAGRAM`.

>>> r = evaluate({**SEED, "grid": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0]]})
>>> [(a["name"], a["wavefronts"], a["max_per_instruction"]) for a in r["accesses"]]
[('store', 16, 1), ('read', 32, 2)]
>>> r["formula"]
'32*m + (n ^ m)'
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bankproof.models import target
from bankproof.models.errors import InputError, log2
from bankproof.models.files import json_value
from bankproof.models.hardware import BANK_BYTES, BANKS, instruction
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import memory_notations, parse_shape
from bankproof.models.notation.formula import formula_text
from bankproof.models.notation.padded import padded_notations
from bankproof.models.notation.triton import shared_alignment
from bankproof.models.space import Space
from bankproof.verifier import api
from bankproof.verifier.engine import detail
from bankproof.verifier.engine.answer import answer, choose
from bankproof.verifier.engine.check import problem_of
from bankproof.verifier.engine.matrices import Matrix, access_matrix, memory_matrix
from bankproof.verifier.engine.scope import groups as scope_groups
from bankproof.verifier.engine.spec import Spec

WHERE = "workbench"
MAX_ELEMENTS_LOG2 = 20  # a request's tensor: each answer enumerates it (2^20: about 1.5 s here)
ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
)
SEED = {  # the seeds' 16x32 fp32 transpose, unswizzled (seeds 000 and 001)
    "memory": "32*m + n",
    "shape": "16x32",
    "dtype": "f32",
    "arch": "sm90",
    "dims": "m,n",
    "accesses": [
        {"name": "store", "kind": "store", "instr": "auto", "layout": ROWS},
        {"name": "read", "kind": "load", "instr": "auto",
         "layout": '{"register": [[0, 2], [0, 4], [0, 8], [0, 16]], '
                   '"lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}'},
    ],
}  # fmt: skip
FIELDS = {"memory", "shape", "dtype", "arch", "dims", "units", "base_align", "accesses", "grid", "access",
          "instruction", "timeout"}  # fmt: skip


def _str(req: Mapping, key: str, default: str | None = None) -> str:
    v = req.get(key, default)
    if not isinstance(v, str) or not v.strip():
        raise InputError(WHERE, key, "must be a non-empty string", v)
    return v.strip()


def problem(req: object) -> Spec:
    """The :class:`Spec` a request describes (``memory``, ``accesses``, ``shape``, ``dtype``, ...)."""
    if not isinstance(req, Mapping):
        raise InputError(WHERE, "request", "must be a JSON object")
    extra = set(req) - FIELDS
    if extra:
        raise InputError(WHERE, sorted(extra)[0], f"is not a field ({', '.join(sorted(FIELDS))})")
    accesses = req.get("accesses")
    if not isinstance(accesses, list) or not accesses or len(accesses) > 8:
        raise InputError(WHERE, "accesses", "must list 1 to 8 accesses")
    listed = []
    for i, a in enumerate(accesses):
        if not isinstance(a, Mapping) or set(a) - {"name", "kind", "instr", "layout"}:
            raise InputError(WHERE, f"accesses[{i}]", "must be {name, kind, instr, layout}", a)
        layout = _str(a, "layout")
        layout = _bases_json(layout, f"accesses[{i}].layout")
        listed.append(api.Access(a.get("kind", "load"), layout, a.get("name") or f"access{i}",
                                 a.get("instr") or "auto"))  # fmt: skip
    dims = req.get("dims")
    dims = [d.strip() for d in dims.split(",")] if isinstance(dims, str) and dims.strip() else dims or None
    base_align = req.get("base_align", 0)
    if isinstance(base_align, str):
        digits = base_align.strip()
        base_align = int(digits) if digits.isdigit() and len(digits) <= 13 else base_align
    shape = parse_shape(_str(req, "shape"))
    if sum(n.bit_length() - 1 for n in shape) > MAX_ELEMENTS_LOG2:
        why = f"has more than 2^{MAX_ELEMENTS_LOG2} elements (the workbench's limit; the CLI takes 2^24)"
        raise InputError(WHERE, "shape", why, "x".join(map(str, shape)))
    return api.problem(
        _bases_json(_str(req, "memory"), "memory"),
        accesses=listed,
        shape=shape,
        dtype=_str(req, "dtype"),
        arch=_str(req, "arch", "sm90"),
        dims=dims,
        units=req.get("units", "element") or "element",
        base_align=base_align,
    )


def _bases_json(text: str, field: str) -> object:
    """Bases pasted as JSON text become a dict (the API's bases form); other text is notation."""
    if not text.startswith("{") and not text.startswith("["):
        return text
    return json_value(text, WHERE, field)


# ----- the toggle grid ---------------------------------------------------------------------------
def offset_roles(elem_bits: int, n: int) -> list[str]:
    """What each of ``n`` offset bits selects: ``word`` (a byte in a bank word), ``bank``,
    ``segment`` (the 128-byte row).

    >>> offset_roles(32, 9)
    ['bank', 'bank', 'bank', 'bank', 'bank', 'segment', 'segment', 'segment', 'segment']
    """
    shift = log2(elem_bits) - 3
    bank_lo, seg_lo = log2(BANK_BYTES), log2(BANK_BYTES * BANKS)
    return ["word" if k + shift < bank_lo else "bank" if k + shift < seg_lo else "segment" for k in range(n)]


def decompose(columns: list[int], roles: list[str]) -> tuple[list[int], list[list[int]]]:
    """(base segment columns, grid ``K``) of packed offset columns: see the module docstring.

    >>> decompose([0b01, 0b11], ["bank", "segment"])  # segment bit reaches m0+n0 = base m0, K = [[1]]
    ([2], [[1]])
    """
    bank = [c for c, r in zip(columns, roles) if r == "bank"]
    echelon: list[tuple[int, int]] = []  # (vector, which bank columns it combines), distinct top bits
    for j, b in enumerate(bank):
        v, m = b, 1 << j
        for e, em in echelon:
            if v ^ e < v:
                v, m = v ^ e, m ^ em
        if v:
            echelon.append((v, m))
            echelon.sort(reverse=True)
    base, grid = [], []
    for c, r in zip(columns, roles):
        if r != "segment":
            continue
        v, m = c, 0
        for e, em in echelon:
            if v ^ e < v:
                v, m = v ^ e, m ^ em
        base.append(v)
        grid.append([(m >> j) & 1 for j in range(len(bank))])
    return base, grid


def with_grid(columns: list[int], roles: list[str], grid: list[list[int]]) -> list[int]:
    """The columns of the layout whose base is ``columns``' and whose grid is ``grid``."""
    base, _ = decompose(columns, roles)
    bank = [c for c, r in zip(columns, roles) if r == "bank"]
    segments = []
    for v, row in zip(base, grid):
        for j, bit in enumerate(row):
            if bit:
                v ^= bank[j]
        segments.append(v)
    return _with_segments(columns, roles, segments)


def _with_segments(columns: list[int], roles: list[str], segments: list[int]) -> list[int]:
    """``columns`` with the segment columns replaced, in order, by ``segments``."""
    it = iter(segments)
    return [next(it) if r == "segment" else c for c, r in zip(columns, roles)]


def _grid_cells(value: object, rows: int, cols: int) -> list[list[int]]:
    if (
        not isinstance(value, list)
        or len(value) != rows
        or not all(isinstance(r, list) and len(r) == cols and all(x in (0, 1) for x in r) for r in value)
    ):
        raise InputError(WHERE, "grid", f"must be {rows} rows of {cols} zeros and ones")
    return [[int(x) for x in r] for r in value]


@dataclass(frozen=True)
class State:
    """One page state: the problem with the grid applied (``spec.memory`` is the toggled layout),
    the grid's description for the page (None: not a linear layout), and the packed columns of
    the grid's base (its layout with every toggle off)."""

    spec: Spec
    grid: dict | None
    base_columns: list[int] | None


def state(req: Mapping) -> State:
    """The request's problem with its grid applied (see the module docstring). Archs whose target
    does not model the workbench are refused: the grid's bank bits follow the phase model."""
    spec = problem(req)
    target.require(spec.arch, "workbench", WHERE)
    mem = spec.memory
    if not isinstance(mem, LinearLayout):
        return State(_preferred(spec), None, None)
    space = Space.of(mem, spec.dims)
    cols = [space.pack_row_major(b) for b in mem.in_bases("offset")]
    roles = offset_roles(spec.elem_bits, len(cols))
    base, loaded = decompose(cols, roles)
    bank = [c for c, r in zip(cols, roles) if r == "bank"]
    grid = req.get("grid")
    cells = loaded if grid is None else _grid_cells(grid, len(base), len(bank))
    bases = {"offset": [list(space.unpack_row_major(v)) for v in with_grid(cols, roles, cells)]}
    if "block" in mem.in_dim_names:
        bases["block"] = mem.in_bases("block")
    layout = LinearLayout.from_bases(bases, dict(mem.out_dims))
    desc = {
        "rows": [f"s{i}" for i in range(len(base))],
        "row_bases": [space.name(v) for v in base],
        "cols": [f"b{j}" for j in range(len(bank))],
        "col_bases": [space.name(v) for v in bank],
        "cells": cells,
        "loaded": loaded,
    }
    return State(_preferred(replace(spec, memory=layout)), desc, _with_segments(cols, roles, base))


def _preferred(spec: Spec) -> Spec:
    """An ``instr`` listing instructions by preference (a TTGIR access's: Triton's order) becomes
    the first the layout pair delivers, so a toggled layout gets the one Triton would pick."""
    out = []
    for acc in spec.accesses:
        if len(acc.instr.split(",")) > 16:
            raise InputError(WHERE, "instr", "lists at most 16 instructions", len(acc.instr.split(",")))
        out.append(replace(acc, instr=choose(problem_of(spec, acc))))
    return replace(spec, accesses=tuple(out))


# ----- answers -----------------------------------------------------------------------------------
def _matrix_json(m: Matrix, lit: set[tuple[int, int]] = frozenset()) -> dict:
    labels = [c for _, cs in m.groups for c in cs]
    return {
        "title": m.title,
        "rows": list(m.rows),
        "groups": [[g, len(cs)] for g, cs in m.groups],
        "cols": labels,
        "cells": [[m.cell(r, c) for c in range(len(labels))] for r in range(len(m.rows))],
        "lit": sorted([list(x) for x in lit]),
    }


def _access(spec: Spec, acc, memory) -> dict:
    """One access's answer (the engine's, counted only: every toggle is answered at once), with
    what the page draws beside it: each instruction's count and Lemma 9.4's spaces."""
    p = replace(problem_of(spec, acc), memory=memory, where=None)
    got = answer(p, ())
    counts, ideals = detail.per_instruction(p)
    out: dict = {
        "name": acc.name,
        "kind": acc.kind,
        **got.to_dict(),
        "short": instruction(got.instr).short,
        "per_instruction": counts.tolist(),
        "ideal_per_instruction": int(ideals.max()),
        "algebra": None,
    }
    lem = detail.lemma(p, got.vector)
    if lem is not None:
        space = Space.of(memory, spec.dims)
        out["algebra"] = {
            "applies": lem.applies,
            "reason": lem.reason,
            "segment_basis": [space.name(v) for v in lem.segment],
            "thread_span": [space.name(v) for v in lem.thread_span],
            "intersection": [space.name(v) for v in lem.directions],
            "dim": len(lem.directions),
            "per_instruction": lem.wavefronts_per_instruction,
            "phases": int(ideals.max()) if len(ideals) else 0,
        }
    return out


def evaluate(req: Mapping) -> dict:
    """Everything the page shows for one state: per access the enumerated wavefronts (per
    instruction too), the counterexample, the algebra; the bank scope of one instruction; the
    matrices with toggled cells lit; the current layout in every notation that expresses it."""
    t0 = time.perf_counter()
    st = state(req)
    spec, grid, memory = st.spec, st.grid, st.spec.memory
    accesses = [_access(spec, acc, memory) for acc in spec.accesses]
    pick = req.get("access")
    if pick is None:  # the costliest access relative to its ideal
        pick = max(accesses, key=lambda a: a["wavefronts"] / max(a["ideal"], 1))["name"]
    instruction = req.get("instruction")
    if instruction is not None and (type(instruction) is not int):
        raise InputError(WHERE, "instruction", "must be an integer", instruction)
    info, phases = scope_groups(spec, pick, instruction)
    now = memory_matrix(memory, spec.dims, spec.elem_bits)
    lit: set[tuple[int, int]] = set()  # memory-matrix cells the grid changed from its base
    for c, v in enumerate(st.base_columns or []):
        lit |= {(r, c) for r in range(len(now.rows)) if now.cell(r, c) != (v >> r) & 1}
    answer = {
        "ok": True,
        "shape": spec.shape,
        "dims": spec.dims,
        "dtype": spec.dtype,
        "elem_bits": spec.elem_bits,
        "memory": {
            "notation": spec.memory_notation,
            "text": spec.memory_text,
            "warnings": list(spec.warnings),
        },
        "grid": grid,
        "accesses": accesses,
        "scope": {
            **info,
            "groups": [
                {str(b): {str(w): ls for w, ls in words.items()} for b, words in g.items()} for g in phases
            ],
        },  # fmt: skip
        "matrices": [_matrix_json(now, lit)]
        + [_matrix_json(access_matrix(a.layout, spec.dims, a.name)) for a in spec.accesses],
        "formula": formula_text(memory, spec.dims) if isinstance(memory, LinearLayout) else None,
        "offset_bases": memory.in_bases("offset") if isinstance(memory, LinearLayout) else None,
    }
    answer["seconds"] = round(time.perf_counter() - t0, 4)
    return answer


def export(req: Mapping) -> dict:
    """Every notation that expresses the current (toggled) memory layout, ready to copy."""
    spec = state(req).spec
    if isinstance(spec.memory, PaddedLayout):
        return {"ok": True, "notations": padded_notations(spec.memory)}
    notations = memory_notations(spec.memory, spec.dims, shared_alignment(None), spec.elem_bits)
    return {"ok": True, "notations": notations}


def _timeout(req: Mapping) -> float:
    t = req.get("timeout", 10)
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 60:
        raise InputError(WHERE, "timeout", "must be between 0 and 60 seconds", t)
    return float(t)


def prove(req: Mapping) -> dict:
    """Every engine (Z3 included, under the request's time limit) on the current layout."""
    return {"ok": True, "result": api.verify(spec=state(req).spec, timeout=_timeout(req)).to_dict()}


def synth(req: Mapping) -> dict:
    """The synthesized layout for the problem's first store and first load, with its optimality."""
    return {"ok": True, "result": api.synth(spec=state(req).spec, timeout=_timeout(req)).to_dict()}


def explain(req: Mapping) -> dict:
    """The §5.4 construction's steps for the problem's writer and reader."""
    from bankproof.verifier.render.explain import to_text

    r = api.explain(spec=state(req).spec)
    return {"ok": True, "text": to_text(r)}
