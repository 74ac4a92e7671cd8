"""Spec files (TOML) and spec dicts read into :class:`~bankproof.verifier.engine.spec.Spec` records, with
errors that name the field: the API's input side (the engines take the records, never the files).

```toml
shape = [16, 32]
dtype = "f32"
arch = "sm90"
dims = ["m", "n"]            # optional names for formulas and reports
cutlass = "3.5.1"            # optional: the release CuTe's auto-vectorizing copy atoms are read as
[memory]                     # exactly one of: triton, cute, offset_bases, formula
formula = "32*m + (n ^ (2*m))"
[[access]]
name = "store"
kind = "store"               # store | load
instr = "auto"
layout.triton = "#ttg.blocked<{...}>"   # or layout.bases = { register = [...], lane = [...], warp = [...] }
```
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from bankproof.models import dtypes, target
from bankproof.models.access import vector_cap
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError, Untranslatable, excerpt
from bankproof.models.files import SPEC_BYTES, read_text
from bankproof.models.notation import MAX_BASES_LOG2, foreign_text, parse_layout, parse_shape
from bankproof.models.notation import cutlass_releases as releases
from bankproof.models.notation.bases import parse_bases
from bankproof.models.notation.cute import CuteLayout
from bankproof.models.notation.cute_names import check_arch
from bankproof.models.notation.cute_tiled_mma import mma_fragment
from bankproof.models.notation.cute_tv import CuteAccess, tiled_copy, tv_to_layout
from bankproof.models.notation.cute_view import read_view
from bankproof.models.notation.formula import default_names
from bankproof.verifier.engine.buffer_engines import read_engines
from bankproof.verifier.engine.spec import AccessSpec, Spec, UnreadAccess
from bankproof.verifier.engine.spec_checks import check_access_layout, check_memory_layout

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_SPEC_BYTES = SPEC_BYTES
Release = tuple[int, int, int] | None
# the fields a spec may give, by table (docs/reference/formats/spec.md lists each; a test holds them equal)
SPEC_FIELDS = ("shape", "dtype", "arch", "dims", "cutlass", "memory", "access", "engine")
MEMORY_NOTATIONS = ("triton", "cute", "offset_bases", "formula", "tma")
MEMORY_FIELDS = (*MEMORY_NOTATIONS, "units", "base_align", "stage")
ACCESS_FIELDS = ("name", "kind", "instr", "layout", "view")
CUTE_ACCESS_KEYS = ("cute_tv", "cute_copy", "cute_mma")
ACCESS_LAYOUTS = ("triton", "bases", *CUTE_ACCESS_KEYS, "tile")  # tile: with cute_tv only
CUTE_COPY_FIELDS = ("atom", "thr", "val")
CUTE_MMA_FIELDS = ("atom", "operand", "warps", "tile", "copy", "transposed")


def _err(field: str, problem: str, value: object = ...) -> InputError:
    return InputError("spec", field, problem) if value is ... else InputError("spec", field, problem, value)


def load_spec(path: str | Path, require_memory: bool = True, partial: bool = False) -> Spec:
    """Read and check a spec file (``partial``: see :func:`parse_spec`)."""
    text = read_text(path, MAX_SPEC_BYTES, "spec", "file")
    return spec_from_text(text, str(path), require_memory, partial)


def spec_from_text(
    text: str, path: str = "<spec>", require_memory: bool = True, partial: bool = False
) -> Spec:
    """A spec from its TOML text (what :func:`load_spec` reads from a file)."""
    if len(text) > MAX_SPEC_BYTES:
        raise _err("file", f"is larger than {MAX_SPEC_BYTES} bytes", len(text))
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError) as e:  # TOMLDecodeError, or an integer of thousands of digits
        raise _err("file", f"is not valid TOML ({excerpt(str(e))})") from None
    return parse_spec(data, path, require_memory, partial)


def parse_spec(data: dict, path: str = "<spec>", require_memory: bool = True, partial: bool = False) -> Spec:
    """A spec from its parsed TOML. ``partial``: an access naming a CuTe atom bankproof has no
    translation for is listed in ``unread`` (with why) instead of refusing the spec (``verify``
    answers the others); otherwise it is refused like any input error."""
    for key in data:
        if key not in SPEC_FIELDS:
            raise _err(key, f"is not a spec field ({', '.join(sorted(SPEC_FIELDS))})")
    if "shape" not in data:
        raise _err("shape", "is missing (e.g. shape = [16, 32])")
    if not isinstance(data["shape"], list) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in data["shape"]
    ):
        raise _err("shape", "must be a list of integers", data["shape"])
    shape = parse_shape(data["shape"], MAX_BASES_LOG2)  # notations that evaluate elements keep 2^24
    dtype = data.get("dtype")
    if not isinstance(dtype, str):
        raise _err("dtype", 'is missing or not a string (e.g. dtype = "f16")', dtype)
    dtype = dtypes.canonical(dtype)  # one vocabulary: e4m3, s8, half_t, float_e4m3_t ... name their types
    elem_bits = dtypes.bits(dtype)
    arch = target.check_arch(data.get("arch", DEFAULT_ARCH), "spec")
    dims = data.get("dims", default_names(len(shape)))
    if (
        not isinstance(dims, list)
        or len(dims) != len(shape)
        or not all(isinstance(d, str) and d.isidentifier() for d in dims)
    ):
        raise _err("dims", f"must list {len(shape)} identifiers, one per shape entry", dims)

    mem = data.get("memory")
    if mem is None and not require_memory:
        mem = {"offset_bases": None}
    if not isinstance(mem, dict):
        raise _err("memory", "is missing (a [memory] table: triton, cute, offset_bases, formula or tma)")
    notations = [k for k in MEMORY_NOTATIONS if k in mem]
    extra = set(mem) - set(MEMORY_FIELDS)
    if extra:
        raise _err(f"memory.{sorted(extra)[0]}", f"is not a memory field ({', '.join(MEMORY_FIELDS)})")
    warnings: tuple[str, ...] = ()
    if len(notations) != 1:
        raise _err(
            "memory", "must give exactly one of triton, cute, offset_bases, formula, tma", notations or None
        )
    note = notations[0]
    if note == "offset_bases" and mem[note] is None:
        memory, text, kind = None, "", "memory"  # synth and explain need no memory layout
    elif note == "offset_bases":
        memory = _field(f"memory.{note}", lambda: parse_bases({"offset": mem[note]}, shape))
        text = str(mem[note])
        kind = "memory"
    else:
        text = mem[note]
        text = text if isinstance(text, str) else foreign_text(text) or text  # a Gluon/CuTe DSL object
        if not isinstance(text, str):
            raise _err(f"memory.{note}", "must be a string", text)
        units = mem.get("units", "element")
        base_align = mem.get("base_align", 0)
        stage = mem.get("stage")
        if stage is not None and note != "cute":
            raise _err("memory.stage", "is for CuTe layouts with a pipeline-stage mode")
        parsed = _field(
            f"memory.{note}",
            lambda: parse_layout(
                text,
                shape,
                dtype=dtype,
                units=units,
                base_align=base_align,
                names=dims,
                notation=note,
                stage=stage,
            ),
        )
        memory, kind, warnings, source = parsed.layout, parsed.kind, parsed.warnings, parsed.source
    if kind != "memory":
        raise _err(f"memory.{note}", "must be a memory (shared) layout, not a distributed one")
    memory = check_memory_layout(memory, f"spec: memory.{note}")

    accesses_raw = data.get("access", [])
    if not isinstance(accesses_raw, list) or not accesses_raw:
        raise _err("access", "must list at least one [[access]]")
    cutlass = releases.release(data.get("cutlass"))  # what CuTe's auto-vectorizing copies mean
    accesses, unread = _accesses(accesses_raw, shape, dtype, dims, arch, partial, cutlass)
    notes = tuple(dict.fromkeys(a.note for a in accesses if a.note))
    if note == "cute":
        accesses = _swizzle_base_cap(accesses, source, elem_bits)
    engines = read_engines(data["engine"], arch) if "engine" in data else ()
    return Spec(
        path,
        shape,
        dtype,
        elem_bits,
        arch,
        dims,
        memory,
        note,
        text,
        accesses,
        warnings + notes,
        unread,
        engines,
    )


def _accesses(
    raw: list, shape: list[int], dtype: str, dims: list[str], arch: str, partial: bool, cutlass: Release
) -> tuple[list[AccessSpec], tuple[UnreadAccess, ...]]:
    """Every ``[[access]]`` read, and (``partial``) those naming an atom with no translation."""
    accesses: list[AccessSpec] = []
    unread: list[UnreadAccess] = []
    names = set()
    for i, a in enumerate(raw):
        try:
            got: AccessSpec | UnreadAccess = _access(a, i, shape, dtype, dims, arch, cutlass)
        except Untranslatable as e:
            if not partial:
                raise
            got = UnreadAccess(a.get("name", f"access{i}"), a["kind"], str(e))
            unread.append(got)
        else:
            accesses.append(got)
        if got.name in names:
            raise _err(f"access[{i}].name", "repeats another access's name", got.name)
        names.add(got.name)
    return accesses, tuple(unread)


def _field(field: str, fn):
    try:
        return fn()
    except InputError as e:  # the same class: an Untranslatable stays one
        raise type(e)(f"spec: {field}: {e.where}", e.field, e.problem, e.value) from None


def _access(
    a: object,
    i: int,
    shape: list[int],
    dtype: str,
    dims: list[str],
    arch: str = DEFAULT_ARCH,
    cutlass: Release = None,
) -> AccessSpec:
    where = f"access[{i}]"
    if not isinstance(a, dict):
        raise _err(where, "must be a table")
    extra = set(a) - set(ACCESS_FIELDS)
    if extra:
        raise _err(f"{where}.{sorted(extra)[0]}", f"is not an access field ({', '.join(ACCESS_FIELDS)})")
    name = a.get("name", f"access{i}")
    if not isinstance(name, str) or not name:
        raise _err(f"{where}.name", "must be a non-empty string", name)
    kind = a.get("kind")
    if kind not in ("load", "store"):
        raise _err(f"{where}.kind", "must be load or store", kind)
    instr = a.get("instr", "auto")
    if not isinstance(instr, str):
        raise _err(f"{where}.instr", "must be a string", instr)
    lay = a.get("layout")
    keys = ("triton", "bases", *CUTE_ACCESS_KEYS)
    given = [k for k in keys if k in lay] if isinstance(lay, dict) else []
    if len(given) != 1 or set(lay) - {given[0]} - ({"tile"} if given == ["cute_tv"] else set()):
        raise _err(f"{where}.layout", f"must give exactly one of {', '.join('layout.' + k for k in keys)}")
    key, value = given[0], lay[given[0]]
    if "view" in a and key not in CUTE_ACCESS_KEYS:
        raise _err(f"{where}.view", "is read with a CuTe layout (layout.cute_tv, cute_copy or cute_mma)")
    if key in CUTE_ACCESS_KEYS:
        for f in ("atom", "copy"):
            if isinstance(value, dict) and isinstance(value.get(f), str):
                check_arch(value[f], arch, f"{where}.layout.{key}.{f}")
        view = _field(f"{where}.view", lambda: read_view(a["view"], shape)) if "view" in a else None
        at = view.shape if view else shape
        cute = _field(
            f"{where}.layout.{key}",
            lambda: cute_access(key, value, at, dtype, kind, lay.get("tile"), cutlass),
        )
        instr = _atom_instr(instr, cute, f"{where}.instr")
        lin = view.apply(cute.layout, cute.layout.out_dim_names) if view else cute.layout
        layout = check_access_layout(lin, kind, f"spec: {where}.layout", dims, arch)
        note = f"{where} ({name}): {cute.note}" if cute.note else ""
        return AccessSpec(name, kind, instr, layout, cute.text, note)
    if key == "triton":
        value = value if isinstance(value, str) else foreign_text(value) or value  # a Gluon object
        if not isinstance(value, str):
            raise _err(f"{where}.layout.triton", "must be a string", value)
        parsed = _field(
            f"{where}.layout.triton",
            lambda: parse_layout(value, shape, dtype=dtype, names=dims, notation="triton"),
        )
        if parsed.kind != "distributed":
            raise _err(f"{where}.layout.triton", "must be a distributed layout (registers, lanes, warps)")
        layout, text = parsed.layout, value
    else:
        if not isinstance(value, dict) or "offset" in value:
            raise _err(f"{where}.layout.bases", "must be a table of register, lane, warp (and block) bases")
        layout = _field(f"{where}.layout.bases", lambda: parse_bases(value, shape))
        text = str(value)
    layout = check_access_layout(layout, kind, f"spec: {where}.layout", dims, arch)
    return AccessSpec(name, kind, instr, layout, text)


def cute_access(
    key: str,
    value: object,
    shape: list[int],
    dtype: str,
    kind: str,
    tile: object = None,
    cutlass: Release = None,
) -> CuteAccess:
    """A CuTe access from a spec's ``layout.cute_tv`` (a TV layout string, optional ``tile``),
    ``layout.cute_copy`` (``{atom, thr, val}``) or ``layout.cute_mma`` (``{atom, operand,
    warps, copy}``); an auto-vectorizing copy atom is read as the ``cutlass`` release defines it
    (the current one when None), and the access's ``note`` says which."""
    bits = dtypes.bits(dtype)
    if key == "cute_tv":
        if not isinstance(value, str):
            raise InputError("cute", "cute_tv", "must be a CuTe layout string", value)
        if tile is not None and (not isinstance(tile, list) or not all(isinstance(t, int) for t in tile)):
            raise InputError("cute", "tile", "must be a list of integers", tile)
        return CuteAccess(tv_to_layout(value, shape, tile), None, value)
    allowed, needed = {
        "cute_copy": (set(CUTE_COPY_FIELDS), {"atom", "thr"}),
        "cute_mma": (set(CUTE_MMA_FIELDS), {"atom", "operand"}),
    }[key]
    if not isinstance(value, dict) or not set(value) <= allowed or not needed <= set(value):
        need, opt = ", ".join(sorted(needed)), ", ".join(sorted(allowed - needed))
        raise InputError("cute", key, f"must be a table with {need} (and {opt})", value)
    for k, v in value.items():
        if not isinstance(v, bool if k == "transposed" else str):
            raise InputError(
                "cute", f"{key}.{k}", "must be true or false" if k == "transposed" else "must be a string", v
            )
    if key == "cute_copy":
        atom, note = releases.resolve_copy(value["atom"], cutlass)
        got = tiled_copy(atom, value["thr"], value.get("val", "(1,1)"), shape, bits, kind)
        return replace(got, note=note)
    warps, copy, transposed = value.get("warps", "(1,1,1)"), value.get("copy"), value.get("transposed", False)
    copy, note = releases.resolve_copy(copy, cutlass) if copy is not None else (None, "")
    got = mma_fragment(
        value["atom"], value["operand"], shape, bits, warps, copy, kind, transposed, value.get("tile")
    )
    return replace(got, note=note)


def _swizzle_base_cap(accesses: list[AccessSpec], source: CuteLayout, elem_bits: int) -> list[AccessSpec]:
    """CuTe's auto-vectorizing copy on a swizzled layout vectorizes at most the swizzle's base
    (``max_common_layout`` of a ``Swizzle<B,M,S>`` composition truncates to ``2^M``, in the units
    the swizzle acts on: bytes under ``smem_ptr[Nb]``, else elements)."""
    if source.swizzle is None:
        return accesses
    base_bits = (1 << source.swizzle.m) * (8 if source.ptr_bits else elem_bits)
    out = []
    for a in accesses:
        if a.instr.startswith("vector") and base_bits < vector_cap(a.instr) * 8:
            a = replace(a, instr=f"vector{max(8, base_bits)}")
        out.append(a)
    return out


def _atom_instr(instr: str, cute: CuteAccess, where: str) -> str:
    """The access's instruction: the copy atom's, unless ``instr`` names the same one."""
    if cute.instr is None:
        return instr
    if instr not in ("auto", cute.instr):
        from bankproof.models.hardware import instruction

        if instruction(instr) != instruction(cute.instr):
            raise InputError(where, "", f"names {instr} but the copy atom {cute.atom} issues {cute.instr}")
    return cute.instr


__all__ = ["cute_access", "load_spec", "parse_spec", "spec_from_text", "tomllib"]
