"""``bankproof kernel``: any CUDA kernel in, its shared-memory account out. CUDA C++ (``.cu``,
compiled here by NVRTC; CUTLASS/CuTe and CUB headers from their wheels) or PTX from any compiler
(nvcc, NVRTC, Triton, the CuTe DSL, tilelang, Mosaic GPU); one CTA of the launch the user states
(block, grid and which CTA, dynamic shared memory, the kernel's arguments, pointers included) run
by the PTX machine; every shared-memory instruction's wavefronts over all its dynamic instances.

>>> import bankproof
>>> r = bankproof.kernel('''
... .visible .entry k()
... {
...   .shared .align 4 .b8 buf[4096];
...   mov.u32 %r1, %tid.x;
...   shl.b32 %r2, %r1, 7;
...   mov.u32 %r3, buf;
...   add.s32 %r4, %r3, %r2;
...   ld.shared.u32 %r5, [%r4];
... }''', block=32)
>>> r.verdict, r.instructions[0].wavefronts, r.instructions[0].conflict.lanes
('refuted', 32, (0, 1))
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.models.files import TEXT_BYTES, read_text
from bankproof.verifier.api.kernel_descriptors import check_descriptors, tensor_maps_of
from bankproof.verifier.api.problem import engines_arg
from bankproof.verifier.kernel import nvrtc
from bankproof.verifier.kernel.analyse import KernelSource, analyse, source_from_ptx
from bankproof.verifier.kernel.buffers import checked as buffers_checked
from bankproof.verifier.kernel.buffers import read_specs, spec_paths
from bankproof.verifier.kernel.records import KernelResult, Launch

WHERE = "kernel"
MAX_THREADS = 1024
MAX_DYNAMIC_SMEM = 232448  # sm90's largest opt-in shared memory per block (227 KB)
MAX_STEPS = 3_000_000


def _dims(value: object, field: str, limit: int) -> tuple[int, int, int]:
    """``128``, ``"32x8"``, ``(32, 8)`` -> ``(x, y, z)``."""
    if isinstance(value, str):
        parts = re.split(r"[x,\s]+", value.strip())
        try:
            value = tuple(int(p) for p in parts if p)
        except ValueError:
            raise InputError(WHERE, field, "must be X, XxY or XxYxZ (positive integers)", value) from None
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise InputError(WHERE, field, "must be X, XxY or XxYxZ (positive integers)", value)
    dims = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= limit:
            raise InputError(WHERE, field, f"must hold integers from 1 to {limit}", value)
        dims.append(v)
    dims += [1] * (3 - len(dims))
    return dims[0], dims[1], dims[2]


def launch_of(block, grid=1, cta=(0, 0, 0), dynamic_smem: int = 0, args: Mapping | None = None) -> Launch:
    """The :class:`~bankproof.verifier.kernel.records.Launch` of the user's values, checked."""
    b = _dims(block, "block", MAX_THREADS)
    if b[0] * b[1] * b[2] > MAX_THREADS:
        raise InputError(WHERE, "block", f"has more than {MAX_THREADS} threads", block)
    g = _dims(grid, "grid", (1 << 31) - 1)
    if isinstance(cta, str):
        cta = (
            tuple(int(x) for x in re.split(r"[x,\s]+", cta.strip()) if x)
            if re.fullmatch(r"[\dx,\s]+", cta)
            else cta
        )
    if (
        not isinstance(cta, (tuple, list))
        or not 1 <= len(cta) <= 3
        or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in cta)
    ):
        raise InputError(WHERE, "cta", "must be X[,Y[,Z]] (non-negative integers)", cta)
    c = tuple(cta) + (0,) * (3 - len(cta))
    if any(ci >= gi for ci, gi in zip(c, g)):
        raise InputError(WHERE, "cta", f"must lie in the grid {g[0]}x{g[1]}x{g[2]}", cta)
    if (
        isinstance(dynamic_smem, bool)
        or not isinstance(dynamic_smem, int)
        or not 0 <= dynamic_smem <= MAX_DYNAMIC_SMEM
    ):
        raise InputError(
            WHERE, "dynamic_smem", f"must be an integer from 0 to {MAX_DYNAMIC_SMEM}", dynamic_smem
        )
    pairs = []
    for k, v in (args or {}).items():
        if not isinstance(k, (str, int)) or isinstance(k, bool) or not re.fullmatch(r"[\w$]{1,200}", str(k)):
            raise InputError(WHERE, "args", "names must be parameter names or positions", k)
        if isinstance(v, bool) or not isinstance(v, int) or not -(1 << 63) <= v < (1 << 64):
            raise InputError(WHERE, "args", f"{k} must be an integer that fits 64 bits", v)
        pairs.append((str(k), int(v)))
    return Launch(b, g, (c[0], c[1], c[2]), dynamic_smem, tuple(pairs))


def read_source(
    source: str | os.PathLike,
    kernel: str | None = None,
    language: str | None = None,
    include: tuple[str, ...] = (),
    defines: Mapping[str, str] | None = None,
    arch: str = DEFAULT_ARCH,
    compile_timeout: float = nvrtc.COMPILE_SECONDS,
    headers: Mapping[str, str] | None = None,
) -> tuple[KernelSource, dict[str, int]]:
    """A kernel read once: PTX as given, CUDA C++ compiled by NVRTC (within ``compile_timeout``
    seconds; ``headers``: header text by include name, for a source given as text); with the C++
    names of its parameters (name -> position) where the source says them."""
    text, name, folder = _text(source, language)
    lang = language or _language(name, text)
    if lang not in ("cuda", "ptx"):
        raise InputError(WHERE, "language", "must be cuda or ptx", lang)
    if lang == "ptx":
        return source_from_ptx(text, name, kernel), {}
    ptx = nvrtc.compile_ptx(
        text, name, arch, tuple(include), dict(defines or {}), folder, compile_timeout, headers
    )
    src = source_from_ptx(ptx, name, kernel, origin="cuda")
    return src, cxx_params(text, src.code.name)


def _text(source, language) -> tuple[str, str, str | None]:
    if isinstance(source, str) and ("\n" in source or language is not None and not Path(source).suffix):
        if len(source) > TEXT_BYTES:
            raise InputError(WHERE, "source", f"is larger than {TEXT_BYTES} bytes")
        return source, "<text>", None
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(WHERE, "source", "must be a path to a .cu or .ptx file, or the text itself", source)
    path = Path(source)
    return read_text(path, TEXT_BYTES, WHERE, "source"), str(source), str(path.parent)


def _language(name: str, text: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in (".cu", ".cuh", ".cpp", ".cc"):
        return "cuda"
    if suffix == ".ptx":
        return "ptx"
    return "ptx" if re.search(r"^\s*(\.visible\s+)?\.entry\b", text, re.M) else "cuda"


def cxx_params(text: str, kernel: str) -> dict[str, int]:
    """C++ parameter names of the ``__global__`` function whose name ends the PTX kernel's name
    (``extern "C"`` names are equal; mangled ones contain the length-prefixed name)."""
    for g in re.finditer(r"__global__", text):
        pos, fname, start = g.end(), None, 0
        while True:  # the first NAME( after __global__ that is not an attribute
            m = re.compile(r"([A-Za-z_]\w*)\s*\(").search(text, pos, pos + 2000)
            if m is None or ";" in text[pos : m.start()] or "{" in text[pos : m.start()]:
                break
            start = _close(text, m.end())
            if m.group(1) in _ATTRIBUTES:
                pos = start
                continue
            fname, start = m.group(1), m.end()
            break
        if fname is None or (kernel != fname and f"{len(fname)}{fname}" not in kernel):
            continue
        i = _close(text, start)
        params = _split_params(text[start : i - 1])
        out = {}
        for pos, p in enumerate(params):
            names = re.findall(r"[A-Za-z_]\w*", p.split("=")[0])
            if names:
                out[names[-1]] = pos
        return out
    return {}


_ATTRIBUTES = frozenset(
    {
        "__launch_bounds__",
        "__attribute__",
        "__declspec",
        "alignas",
        "__cluster_dims__",
        "__maxnreg__",
        "__align__",
    }
)


def _close(text: str, start: int) -> int:
    """The index just past the parenthesis that closes the one opened before ``start``."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def kernel(
    source: str | os.PathLike,
    *,
    block: int | str | tuple = 128,
    kernel: str | None = None,
    grid: int | str | tuple = 1,
    cta: tuple | str = (0, 0, 0),
    dynamic_smem: int = 0,
    args: Mapping[str, int] | None = None,
    include: tuple[str, ...] = (),
    defines: Mapping[str, str] | None = None,
    language: str | None = None,
    arch: str = DEFAULT_ARCH,
    max_steps: int = MAX_STEPS,
    time_limit: float = 120.0,
    tensor_maps: Mapping | None = None,
    headers: Mapping[str, str] | None = None,
    engines: str | Sequence[str] = "all",
    buffers: Mapping[str, object] | None = None,
) -> KernelResult:
    """The shared-memory account of one CTA of a kernel (see the module docstring). ``source`` is
    a ``.cu`` or ``.ptx`` path or the text itself; ``args`` by C++ parameter name (CUDA sources),
    PTX parameter name or position; ``include``/``defines`` are NVRTC's ``-I``/``-D``; ``headers``
    header text by include name (a source given as text); ``time_limit`` bounds the whole call,
    the compile included; ``engines`` (as ``verify`` takes them): those that answer each
    instruction whose addresses make a layout, beside the enumeration of its instances;
    ``buffers``: what pointer arguments point to (numpy arrays, torch tensors, bytes; ``None`` a
    null pointer), by the same names as ``args``: loads from them read these values
    (:mod:`~bankproof.verifier.kernel.buffers`)."""
    chosen = engines_arg(engines, "kernel")
    deadline = time.monotonic() + _seconds(time_limit)
    src, names = read_checked(
        source, kernel, language, include, defines, arch, args, max_steps, time_limit, headers
    )
    launch = check_launch(src, launch_of(block, grid, cta, dynamic_smem, by_param(dict(args or {}), names)))
    launch = with_buffers(launch, src, names, buffers)
    maps = tensor_maps_of(tensor_maps, src, names)
    left = max(deadline - time.monotonic(), 1e-3)
    result, trace = analyse(src, launch, arch, max_steps, left, keep_trace=True, engines=chosen)
    if not trace.engines or not any(
        r.descriptors != (None, None) for rows in trace.engines.values() for r in rows
    ):
        return result
    checks = check_descriptors(trace.engines, src.code, maps)
    verdict = result.verdict
    if verdict in ("proved", "unknown") and any(c.verdict == "refuted" for c in checks):
        verdict = "refuted"
    return replace(result, descriptors=checks, verdict=verdict)


def read_checked(
    source: str | os.PathLike,
    kernel: str | None,
    language: str | None,
    include: tuple[str, ...],
    defines: Mapping[str, str] | None,
    arch: str,
    args: Mapping[str, int] | None,
    max_steps: int,
    time_limit: float,
    headers: Mapping[str, str] | None = None,
) -> tuple[KernelSource, dict[str, int]]:
    """Every option of a kernel command checked, the kernel read once (:func:`read_source`, a
    compile within ``time_limit``), and each of ``args`` checked to name one of its parameters."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 1 <= max_steps <= 100 * MAX_STEPS:
        raise InputError(WHERE, "max_steps", f"must be an integer from 1 to {100 * MAX_STEPS}", max_steps)
    _seconds(time_limit)
    if not isinstance(include, (tuple, list)) or not all(isinstance(d, (str, os.PathLike)) for d in include):
        raise InputError(WHERE, "include", "must be a list of folders", include)
    if defines is not None and not isinstance(defines, Mapping):
        raise InputError(WHERE, "defines", "must be a mapping NAME -> value", defines)
    if args is not None and not isinstance(args, Mapping):
        raise InputError(WHERE, "args", "must be a mapping NAME -> integer", args)
    if kernel is not None and not isinstance(kernel, str):
        raise InputError(WHERE, "kernel", "must be a kernel's name", kernel)
    if language is not None and language not in ("cuda", "ptx"):
        raise InputError(WHERE, "language", "must be cuda or ptx", language)
    if not isinstance(arch, str):
        raise InputError(WHERE, "arch", "must be an arch name (sm80, sm90, ...)", arch)
    src, names = read_source(
        source, kernel, language, tuple(str(d) for d in include), defines, arch, float(time_limit), headers
    )
    given: dict[int, str] = {}
    for key in args or {}:
        check_param(str(key), src, names, "args")
        at = param_index(str(key), src, names)
        if at in given:
            raise InputError(WHERE, "args", f"gives parameter {at} twice (as {given[at]} and {key})", key)
        given[at] = str(key)
    return src, names


def check_launch(src: KernelSource, launch: Launch) -> Launch:
    """``launch``, unless the kernel's ``.reqntid`` or ``.maxntid`` says it would fail."""
    need, most = src.code.block_hint, src.code.max_block
    if need is not None and tuple(launch.block) != tuple(need) + (1,) * (3 - len(need)):
        shape = "x".join(map(str, need))
        raise InputError(
            WHERE, "block", f"contradicts the kernel's .reqntid {shape} (the launch fails)", launch.block
        )
    if most is not None and math.prod(launch.block) > math.prod(most):
        shape = "x".join(map(str, most))
        raise InputError(
            WHERE,
            "block",
            f"has more threads than the kernel's .maxntid {shape} (the launch fails)",
            launch.block,
        )
    return launch


def param_index(key: str, src: KernelSource, names: dict[str, int]) -> int:
    """The position of the parameter ``key`` names (a C++ name, a PTX name or a position)."""
    if key in names:
        return names[key]
    params = [n for _, n in src.code.params]
    return params.index(key) if key in params else int(key)


def _seconds(time_limit: object) -> float:
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not 0 < time_limit <= 3600:
        raise InputError(WHERE, "time_limit", "must be seconds in (0, 3600]", time_limit)
    return float(time_limit)


def check_param(key: str, src: KernelSource, names: dict[str, int], field: str) -> None:
    """An ``InputError`` on ``field`` unless ``key`` names a parameter of the kernel."""
    if not known_arg(key, src, names):
        choices = ", ".join(list(names) or [n for _, n in src.code.params]) or "none"
        raise InputError(
            WHERE, field, f"names no parameter of {src.code.name} (its parameters: {choices})", key
        )


def with_buffers(launch: Launch, src: KernelSource, names: dict[str, int], buffers: Mapping | None) -> Launch:
    """``launch`` with the user's buffers (each naming a parameter) and the names messages show."""
    bufs = buffers_checked(buffers)
    for key, _ in bufs:
        check_param(key, src, names, "buffers")
    params = [n for _, n in src.code.params]
    keyed = tuple((str(param_index(k, src, names)), b) for k, b in bufs)
    if len({k for k, _ in keyed}) != len(keyed):
        raise InputError(WHERE, "buffers", "name one parameter twice")
    given = {k for k, _ in launch.args}
    for k, _ in keyed:
        if k in given or params[int(k)] in given:
            raise InputError(WHERE, "buffers", f"{params[int(k)]} is also given as an integer (--arg)")
    shown = tuple((params[pos], name) for name, pos in names.items() if pos < len(params))
    return replace(launch, buffers=keyed, names=shown)


def by_param(values: Mapping, names: dict[str, int]) -> dict[str, int]:
    """Argument values keyed as the launch takes them (a C++ name becomes its position)."""
    return {str(names.get(str(k), k)): v for k, v in values.items()}


def known_arg(key: str, src: KernelSource, names: dict[str, int]) -> bool:
    params = [n for _, n in src.code.params]
    return key in names or key in params or (key.isdigit() and int(key) < len(params))


__all__ = ["kernel", "launch_of", "read_specs", "spec_paths", "with_buffers", "read_source", "cxx_params",
           "read_checked", "check_param", "by_param", "MAX_STEPS", "WHERE"]  # fmt: skip
