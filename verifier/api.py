"""The Python API: plain functions that take layouts as notation strings, ``LinearLayout``s or
plain bases (no spec file needed) and return frozen results whose ``to_json()`` is the CLI's
``--json``. Bad input raises :class:`~bankproof.models.errors.InputError` with the message the
CLI prints. ``bankproof`` re-exports everything here.

>>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
>>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
>>> r = verify("32*m + (n ^ m)", store=rows, load=cols, shape=(16, 32), dtype="f32")
>>> r.verdict, [a.wavefronts for a in r.accesses], r.access("load").counterexample.lanes
('refuted', [16, 32], (1, 16))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bankproof.models import dtypes
from bankproof.models.errors import InputError
from bankproof.models.hardware import check_arch
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout
from bankproof.models.notation import foreign_text, parse_layout, parse_shape
from bankproof.models.notation.bases import parse_bases
from bankproof.models.notation.formula import default_names
from bankproof.models.notation.gluon import gluon_shape, is_gluon
from bankproof.verifier import batch, check, describe, scope, synthesis
from bankproof.verifier import convert as conversion
from bankproof.verifier.results import (
    ConvertResult,
    ExplainResult,
    LayoutResult,
    ScanResult,
    ShowResult,
    SynthResult,
    VerifyResult,
    WavefrontsResult,
)
from bankproof.verifier.spec import (
    AccessSpec,
    Spec,
    check_access_layout,
    check_memory_layout,
    load_spec,
    parse_spec,
)
from bankproof.verifier.triton.scan import scan_text

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


def _nvidia_only(p: Spec, where: str) -> None:
    """AMD archs are modeled for verify, layout and wavefronts only so far: refuse the rest."""
    from bankproof.models import amd

    if amd.check_arch(p.arch):
        raise InputError(
            where, "arch", "is an AMD model: only verify, layout and wavefronts take AMD archs so far", p.arch
        )


def _engines(engines: str | Sequence[str], where: str) -> tuple[str, ...]:
    if isinstance(engines, str):
        if engines not in ENGINES:
            raise InputError(where, "engines", f"must be one of {', '.join(ENGINES)}", engines)
        return ENGINES[engines]
    chosen = tuple(engines)
    full = ENGINES["all"]
    if not chosen or not all(isinstance(e, str) and e in full for e in chosen):
        raise InputError(where, "engines", f"must name some of {', '.join(full)}", list(chosen))
    return tuple(e for e in full if e in chosen)


def _timeout(timeout: float, where: str) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
        raise InputError(where, "timeout", "must be between 0 and 3600 seconds", timeout)
    return float(timeout)


def _memory(
    memory: MemoryLike, shape: list[int], dtype: str, dims: list[str], units: str, base_align: int, stage=None
):
    """(layout, notation name, text, warnings) of a memory layout given in any form."""
    where = "memory"
    if isinstance(memory, (LinearLayout, PaddedLayout)):
        lin = memory.linear if isinstance(memory, PaddedLayout) else memory
        if [s for _, s in lin.out_dims] != shape or lin.in_dim_names[:1] != ["offset"]:
            raise InputError(where, "layout", f"must map 'offset' onto the shape {shape}", dict(lin.out_dims))
        text = str(lin.as_dict()["offset"]) if isinstance(memory, LinearLayout) else "(padded)"
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
        return layout, str(layout.as_dict())
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


def problem(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    units: str = "element",
    base_align: int = 0,
    stage: int | None = None,
    spec: SpecLike | None = None,
    require_memory: bool = True,
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
        if isinstance(spec, Spec):
            return spec
        if isinstance(spec, Mapping):
            return parse_spec(dict(spec), "<spec>", require_memory)
        if isinstance(spec, (str, Path)):
            return load_spec(spec, require_memory)
        raise InputError("problem", "spec", "must be a path, a dict or a Spec", type(spec).__name__)
    if shape is None:  # a Gluon object that carries its shape gives it
        given = [memory, store, load, *(a.layout for a in accesses if isinstance(a, Access))]
        shape = next((s for x in given if is_gluon(x) and (s := gluon_shape(x))), None)
    if shape is None:
        raise InputError("problem", "shape", "is missing (e.g. shape=(16, 32))")
    size = parse_shape(shape)
    if not isinstance(dtype, str):
        raise InputError("problem", "dtype", 'is missing or not a string (e.g. dtype="f16")', dtype)
    elem_bits = dtypes.bits(dtype)
    check_arch(arch, "problem")
    names = list(dims) if dims is not None else default_names(len(size))
    if len(names) != len(size) or not all(isinstance(d, str) and d.isidentifier() for d in names):
        raise InputError("problem", "dims", f"must list {len(size)} identifiers, one per shape entry", names)
    listed = [a if isinstance(a, Access) else None for a in accesses]
    if None in listed:
        raise InputError("problem", "accesses", "must be Access values", accesses)
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
        mem, notation, text, warnings = _memory(memory, size, dtype, names, units, base_align, stage)
        mem = check_memory_layout(mem, "memory")
    return Spec("<python>", size, dtype, elem_bits, arch, names, mem, notation, text, built, warnings)


def layout(
    notation: str,
    shape: str | Sequence[int] | None = None,
    *,
    dtype: str | None = None,
    units: str = "element",
    base_align: int = 0,
    dims: Sequence[str] | None = None,
    banks: bool = False,
) -> LayoutResult:
    """Parse a layout in any notation and describe it (``bankproof layout``).

    >>> r = layout("Sw<3,2,3> o (8,8):(1,8)", dtype="f32", banks=True)
    >>> r.kind, r.banks[1][:4]
    ('memory', [1, 9, 17, 25])
    """
    return describe.describe_layout(notation, shape, dtype, units, base_align, dims, banks)


def verify(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    units: str = "element",
    base_align: int = 0,
    spec: SpecLike | None = None,
    engines: str | Sequence[str] = "all",
    timeout: float = 10.0,
) -> VerifyResult:
    """Wavefronts of every access, decided by enumeration, Lemma 9.4 and Z3 (``bankproof verify``).

    >>> verify(spec={"shape": [32], "dtype": "f32", "memory": {"formula": "i"}, "access": [{"kind": "store",
    ...     "layout": {"bases": {"lane": [[1], [2], [4], [8], [16]]}}}]}).verdict
    'proved'
    """
    chosen, seconds = _engines(engines, "verify"), _timeout(timeout, "verify")
    p = problem(memory, store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch,
                dims=dims, units=units, base_align=base_align, spec=spec)  # fmt: skip
    return check.verify(p, chosen, seconds)


def synth(
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    engines: str | Sequence[str] = "all",
    timeout: float = 10.0,
) -> SynthResult:
    """The optimal memory layout for the writer (first store) and reader (first load), in every
    notation, verified, with Z3's proof that no linear layout is cheaper (``bankproof synth``).

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
    ...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
    >>> r = synth(store=rows, load=cols, shape=(16, 32), dtype="f32", engines="enum")
    >>> [(a.instr, a.instructions, a.wavefronts) for a in r.accesses], r.verdict
    ([('st.shared.v4.b32', 4, 16), ('ld.shared.b32', 16, 16)], 'proved')
    """
    chosen, seconds = _engines(engines, "synth"), _timeout(timeout, "synth")
    p = problem(store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims,
                spec=spec, require_memory=False)  # fmt: skip
    _nvidia_only(p, "synth")
    return synthesis.synth(p, chosen, seconds)


def explain(
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
) -> ExplainResult:
    """The §5.4 construction's sets for the writer and reader, bits named after the dims
    (``bankproof explain``; ``bankproof.render.explain_text`` narrates it).

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
    ...         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
    >>> r = explain(store=rows, load=cols, shape=(16, 32), dtype="f32")
    >>> r.sets["H"], r.formula
    (('n1⊕m0', 'n2⊕m1', 'n3⊕m2', 'n4⊕m3'), '32*m + (n ^ (2*m))')
    """
    p = problem(store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims,
                spec=spec, require_memory=False)  # fmt: skip
    _nvidia_only(p, "explain")
    return synthesis.explain(p)


def convert(
    source: LayoutLike | None = None,
    destination: LayoutLike | None = None,
    *,
    memory: MemoryLike | None = None,
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    timeout: float = 10.0,
) -> ConvertResult:
    """Convert ``source`` into ``destination``: the warp-shuffle plan and the round trip through
    shared memory (``memory``, else the synthesized layout), each proved by Z3.

    >>> rows = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...         "warpsPerCTA = [1, 1], order = [1, 0]}>")
    >>> cols = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
    ...         "warpsPerCTA = [1, 1], order = [0, 1]}>")
    >>> convert(rows, cols, shape=(32, 32), dtype="f32").verdict
    'proved'
    """
    seconds = _timeout(timeout, "convert")
    if spec is None and (source is None or destination is None):
        raise InputError("convert", "source/destination", "must both be given (or spec=...)")
    accesses = (
        ()
        if spec is not None
        else (Access("store", source, "source"), Access("load", destination, "destination"))
    )
    p = problem(memory, accesses=accesses, shape=shape, dtype=dtype, arch=arch, dims=dims, spec=spec,
                require_memory=False)  # fmt: skip
    _nvidia_only(p, "convert")
    return conversion.convert(p, seconds)


def show(
    memory: MemoryLike | None = None,
    *,
    store: LayoutLike | None = None,
    load: LayoutLike | None = None,
    accesses: Sequence[Access] = (),
    shape: str | Sequence[int] | None = None,
    dtype: str | None = None,
    arch: str = "sm90",
    dims: Sequence[str] | None = None,
    spec: SpecLike | None = None,
    access: str | None = None,
    instruction: int | None = None,
) -> ShowResult:
    """The bank scope of one instruction (``bankproof show``): per wavefront group, which lanes
    reach which word of which bank.

    >>> r = show("32*m + n", load="#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
    ...          "warpsPerCTA = [1, 1], order = [1, 0]}>", shape=(32, 32), dtype="f32")
    >>> r.instr, sorted(r.groups[0][0].items())[:2]
    ('ld128', [(0, [0]), (32, [1])])
    """
    p = problem(memory, store=store, load=load, accesses=accesses, shape=shape, dtype=dtype, arch=arch,
                dims=dims, spec=spec)  # fmt: skip
    _nvidia_only(p, "show")
    return scope.show(p, access, instruction)


def scan_ttgir(
    text: str | Sequence[str],
    path: str | Sequence[str] = "<ttgir>",
    ptx: str | Sequence[str] | None = None,
    args: dict[str, int] | None = None,
) -> ScanResult:
    """Every shared buffer of TTGIR text (or several texts), each access's exact wavefronts, the
    optimum and a better layout when there is one (``bankproof triton scan``). With ``ptx`` (the
    same compile's PTX, one per text) each report also gets the whole-kernel ``ledger``: every
    PTX shared-memory instruction owned by a TTGIR op and counted; ``args`` (kernel arguments by
    name, ``program_id_x``...) resolve loop trip counts.

    >>> from pathlib import Path
    >>> sample = (Path(__file__).parent / "triton" / "sample.ttgir").read_text()
    >>> r = scan_ttgir(sample, "sample.ttgir")
    >>> [(b["wavefronts"], b["optimal_wavefronts"]) for b in r.reports[0]["buffers"]], r.worse
    ([(272, 32)], True)
    """
    texts = [text] if isinstance(text, str) else list(text) if isinstance(text, (list, tuple)) else [None]
    paths = (
        [path] * len(texts)
        if isinstance(path, str)
        else list(path)
        if isinstance(path, (list, tuple))
        else []
    )
    if len(paths) != len(texts) or not all(isinstance(t, str) for t in texts + paths):
        raise InputError("scan_ttgir", "text", "must be TTGIR text or a list of texts (one path each)")
    reports = [scan_text(t, p) for t, p in zip(texts, paths, strict=True)]
    if ptx is not None:
        ptxs = [ptx] if isinstance(ptx, str) else list(ptx) if isinstance(ptx, (list, tuple)) else []
        if len(ptxs) != len(texts) or not all(isinstance(x, str) for x in ptxs):
            raise InputError("scan_ttgir", "ptx", "must be PTX text, one per TTGIR text")
        if args is not None and not (
            isinstance(args, dict) and all(isinstance(k, str) and type(v) is int for k, v in args.items())
        ):
            raise InputError("scan_ttgir", "args", "must map argument names to integers", args)
        from bankproof.verifier.triton import ledger

        for rep, t, x in zip(reports, texts, ptxs, strict=True):
            try:
                rep["ledger"] = ledger.build(rep, t, x, args)
            except (ValueError, KeyError, IndexError) as e:  # PTX the reader cannot read
                raise InputError("scan_ttgir", "ptx", f"cannot be read as a kernel ({e})") from None
    return ScanResult(1, tuple(reports))


def wavefronts(
    instr: str, byte_offsets: Sequence[int], active: Sequence[bool] | None = None, *, arch: str = "sm90"
) -> WavefrontsResult:
    """The hardware model's wavefronts for one warp instruction (``bankproof wavefronts``).

    >>> wavefronts("ld.shared.v4.b32", [0] * 32)
    WavefrontsResult(wavefronts=2, ideal=2, groups=[[0, 1, ..., 15], [16, 17, ..., 31]], status='measured')
    """
    import numbers

    def plain(x: Any) -> Any:
        return int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x

    case: dict = {"instr": instr, "byte_offsets": [plain(x) for x in byte_offsets]}
    if active is not None:
        case["active"] = [bool(x) if type(x).__name__ == "bool_" else x for x in active]
    try:
        return batch.run_cases([(1, case)], arch)[0]
    except InputError as e:  # name the argument, not a JSONL line
        raise InputError("wavefronts", e.field, e.problem, e.value) from None
