"""The inputs every command shares: a problem (what a spec file describes) from Python values
(notation strings, ``LinearLayout``s, bases, Gluon or CuTe DSL objects), with the argument named
in every refusal.

>>> problem("32*m + n", store="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
...         "warpsPerCTA = [1, 1], order = [1, 0]}>", shape="16x32", dtype="f16").elem_bits
16
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bankproof.models import dtypes, target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.files import SPEC_BYTES, read_text
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import MAX_BASES_LOG2, foreign_text, parse_layout, parse_shape
from bankproof.models.notation.bases import parse_bases
from bankproof.models.notation.formula import default_names
from bankproof.models.notation.gluon import gluon_shape, is_gluon
from bankproof.verifier.api.spec_file import load_spec, parse_spec, tomllib
from bankproof.verifier.engine import check
from bankproof.verifier.engine.spec import AccessSpec, Spec
from bankproof.verifier.engine.spec_checks import check_access_layout, check_memory_layout

LayoutLike = str | LinearLayout | Mapping[str, Any]
MemoryLike = str | LinearLayout | PaddedLayout | Mapping[str, Any] | Sequence[Sequence[int]]
SpecLike = str | Path | Mapping[str, Any] | Spec

ENGINES = check.ENGINE_NAMES


@dataclass(frozen=True)
class Access:
    """One access of a problem: ``kind`` is ``store`` or ``load``; ``layout`` a distributed layout
    (Triton attribute, bases JSON, ``LinearLayout`` or a ``{"register": ..., "lane": ...}`` dict);
    ``instr`` ``auto`` (widest legal vector) or an instruction name (``ldsm.x4``, ``st.shared.b32``).

    >>> Access("load", "#ttg.blocked<{...}>", name="read").name
    'read'
    """

    kind: str
    layout: LayoutLike
    name: str = ""
    instr: str = "auto"


def require_modeled(p: Spec, command: str) -> None:
    """Refuse a command its arch's target does not model (yet), naming the arch."""
    target.require(p.arch, command, command)


def engines_arg(engines: str | Sequence[str], where: str) -> tuple[str, ...]:
    if isinstance(engines, str):
        if engines not in ENGINES:
            raise InputError(where, "engines", f"must be one of {', '.join(ENGINES)}", engines)
        return ENGINES[engines]
    if not isinstance(engines, (list, tuple)):
        raise InputError(where, "engines", f"must be one of {', '.join(ENGINES)} or a list", engines)
    chosen = tuple(engines)
    full = ENGINES["all"]
    if not chosen or not all(isinstance(e, str) and e in full for e in chosen):
        raise InputError(where, "engines", f"must name some of {', '.join(full)}", list(chosen))
    return tuple(e for e in full if e in chosen)


def timeout_arg(timeout: float, where: str) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
        raise InputError(where, "timeout", "must be between 0 and 3600 seconds", timeout)
    return float(timeout)


def read_memory(
    memory: MemoryLike, shape: list[int], dtype: str, dims: list[str], units: str, base_align: int, stage=None
):
    """(layout, notation name, text, warnings) of a memory layout given in any form."""
    where = "memory"
    if isinstance(memory, (LinearLayout, PaddedLayout)):
        lin = memory.linear if isinstance(memory, PaddedLayout) else memory
        if [s for _, s in lin.out_dims] != shape or lin.in_dim_names[:1] != ["offset"]:
            raise InputError(where, "layout", f"must map 'offset' onto the shape {shape}", dict(lin.out_dims))
        text = (
            str([list(b) for b in lin.in_bases("offset")]) if isinstance(memory, LinearLayout) else "(padded)"
        )
        return memory, "bases", text, ()
    memory = foreign_text(memory) or memory  # a Gluon or CuTe DSL layout object
    if isinstance(memory, Mapping):
        if set(memory) != {"offset"}:
            raise InputError(where, "bases", "must be {'offset': [[...], ...]}", sorted(memory))
        memory = memory["offset"]
    if isinstance(memory, (list, tuple)):
        bases = [list(b) if isinstance(b, (list, tuple)) else b for b in memory]
        return parse_bases({"offset": bases}, shape), "offset_bases", str(bases), ()
    if not isinstance(memory, str):
        raise InputError(
            where, "layout", "must be notation text, a Gluon layout, a LinearLayout or offset bases", memory
        )
    parsed = parse_layout(
        memory, shape, dtype=dtype, units=units, base_align=base_align, names=dims, stage=stage
    )
    if parsed.kind != "memory":
        raise InputError(where, "layout", "must be a memory (shared) layout, not a distributed one")
    return parsed.layout, parsed.notation, memory, parsed.warnings


def _distributed(layout: LayoutLike, shape: list[int], dtype: str, dims: list[str], where: str):
    if isinstance(layout, LinearLayout):
        if [s for _, s in layout.out_dims] != shape:
            raise InputError(where, "layout", f"must cover the shape {shape}", dict(layout.out_dims))
        return layout, layout.text
    if isinstance(layout, Mapping):
        return parse_bases(dict(layout), shape), str(dict(layout))
    layout = foreign_text(layout) or layout  # a Gluon layout object
    if not isinstance(layout, str):
        raise InputError(
            where, "layout", "must be a notation string, a Gluon layout, a LinearLayout or bases", layout
        )
    parsed = parse_layout(layout, shape, dtype=dtype, names=dims)
    if parsed.kind != "distributed":
        raise InputError(where, "layout", "must be a distributed layout (registers, lanes, warps)")
    return parsed.layout, layout


def _names(dims: Sequence[str] | None, rank: int) -> list[str]:
    """The dim names given (one identifier per shape entry), or the defaults."""
    if dims is None:
        return default_names(rank)
    if not isinstance(dims, (list, tuple)):
        raise InputError("problem", "dims", "must be a list of names", dims)
    if len(dims) != rank or not all(isinstance(d, str) and d.isidentifier() for d in dims):
        raise InputError("problem", "dims", f"must list {rank} identifiers, one per shape entry", dims)
    return list(dims)


def _given_spec(spec: SpecLike, require_memory: bool, partial: bool) -> Spec:
    """A spec given whole: a :class:`Spec`, its TOML as a dict, or a file's path."""
    if isinstance(spec, Spec):
        if spec.unread and not partial:  # only verify answers a spec in part
            first = spec.unread[0]
            raise InputError("problem", f"access {first.name}", "was not read", first.reason)
        return spec
    if isinstance(spec, Mapping):
        return parse_spec(dict(spec), "<spec>", require_memory, partial)
    if isinstance(spec, (str, Path)):
        return load_spec(spec, require_memory, partial)
    raise InputError("problem", "spec", "must be a path, a dict or a Spec", type(spec).__name__)


def problem(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = DEFAULT_ARCH,
    dims: Sequence[str] | None = None,
    units: str = "element",
    base_align: int = 0,
    stage: int | None = None,
    spec: SpecLike | None = None,
    require_memory: bool = True,
    partial: bool = False,
) -> Spec:
    """A problem (what a spec file describes) from Python values, or from ``spec``: a spec file's
    path, its parsed TOML as a dict, or a :class:`Spec`.

    >>> p = problem("32*m + n", store="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...             "warpsPerCTA = [1, 1], order = [1, 0]}>", shape="16x32", dtype="f16")
    >>> p.dims, [a.name for a in p.accesses], p.elem_bits
    (['m', 'n'], ['store'], 16)
    """
    if spec is not None:
        pairs = (("memory", memory), ("store", store), ("load", load), ("shape", shape), ("dtype", dtype))
        given = [k for k, v in pairs if v is not None] + (["accesses"] if accesses else [])
        if given:
            raise InputError("problem", given[0], "must not be given with spec (the spec says it)")
        return _given_spec(spec, require_memory, partial)
    if shape is None:  # a Gluon object that carries its shape gives it
        given = [memory, store, load, *(a.layout for a in accesses if isinstance(a, Access))]
        shape = next((s for x in given if is_gluon(x) and (s := gluon_shape(x))), None)
    if shape is None:
        raise InputError("problem", "shape", "is missing (e.g. shape=(16, 32))")
    size = parse_shape(shape, MAX_BASES_LOG2)  # text notations that evaluate elements keep 2^24
    if not isinstance(dtype, str):
        raise InputError("problem", "dtype", 'is missing or not a string (e.g. dtype="f16")', dtype)
    elem_bits = dtypes.bits(dtype)
    target.check_arch(arch, "problem")
    names = _names(dims, len(size))
    if not isinstance(accesses, (list, tuple)) or not all(isinstance(a, Access) for a in accesses):
        raise InputError("problem", "accesses", "must be a list of Access values", accesses)
    listed = list(accesses)
    if store is not None:
        listed.insert(0, Access("store", store, "store"))
    if load is not None:
        listed.append(Access("load", load, "load"))
    if not listed:
        raise InputError("problem", "accesses", "must give a store or load layout (store=..., load=...)")
    built: list[AccessSpec] = []
    for i, a in enumerate(listed):
        where = f"access[{i}]"
        if a.kind not in ("store", "load"):
            raise InputError(where, "kind", "must be load or store", a.kind)
        for field in ("name", "instr"):
            if not isinstance(getattr(a, field), str):
                raise InputError(where, field, "must be a string", getattr(a, field))
        name = a.name or f"access{i}"
        if name in {b.name for b in built}:
            raise InputError(where, "name", "repeats another access's name", name)
        lay, text = _distributed(a.layout, size, dtype, names, where)
        lay = check_access_layout(lay, a.kind, where, names, arch)
        built.append(AccessSpec(name, a.kind, a.instr, lay, text))
    if memory is None:
        if require_memory:
            raise InputError(
                "problem", "memory", "is missing (a memory layout: notation, LinearLayout or bases)"
            )
        mem, notation, text, warnings = None, "memory", "", ()
    else:
        mem, notation, text, warnings = read_memory(memory, size, dtype, names, units, base_align, stage)
        mem = check_memory_layout(mem, "memory")
    return Spec("<python>", size, dtype, elem_bits, arch, names, mem, notation, text, built, warnings)


def page_request(path: str) -> dict:
    """A spec file as the workbench page's request (the memory as written; accesses as written when they
    are Triton text, else as their bases)."""
    text = read_text(path, SPEC_BYTES, "serve", "SPEC")
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError) as e:  # TOMLDecodeError, or an integer of thousands of digits
        raise InputError("serve", "SPEC", f"cannot be read ({type(e).__name__})", path) from None
    spec = load_spec(path)
    mem = data.get("memory", {})
    note = next(k for k in ("triton", "cute", "offset_bases", "formula") if k in mem)
    memory = mem[note] if note != "offset_bases" else json.dumps(mem[note])
    if "stage" in mem:  # one stage of a staged CuTe layout: its bases
        memory = json.dumps(spec.memory.in_bases("offset"))
    accesses = []
    for raw, acc in zip(data.get("access", []), spec.accesses):
        lay = raw.get("layout", {})
        text = lay["triton"] if "triton" in lay else json.dumps(acc.layout.as_dict())
        accesses.append({"name": acc.name, "kind": acc.kind, "instr": acc.instr, "layout": text})
    out = {"memory": memory, "shape": "x".join(map(str, spec.shape)), "dtype": spec.dtype,
           "arch": spec.arch, "dims": ",".join(spec.dims), "accesses": accesses}  # fmt: skip
    if "units" in mem and "stage" not in mem:
        out["units"] = mem["units"]
        out["base_align"] = mem.get("base_align", 0)
    return out


__all__ = [
    "problem",
    "Access",
    "LayoutLike",
    "MemoryLike",
    "SpecLike",
    "read_memory",
    "engines_arg",
    "timeout_arg",
    "require_modeled",
    "page_request",
    "spec_table",
]


def spec_table(text: str, where: str = "spec", field: str = "spec") -> dict:
    """A spec's TOML text as its table (what ``verify(spec=...)`` takes), refused with the field
    named when it is not TOML.

    >>> spec_table('shape = [32]')["shape"]
    [32]
    """
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError) as e:  # TOMLDecodeError, or an integer of thousands of digits
        raise InputError(where, field, f"is not valid TOML ({str(e)[:80]})") from None
