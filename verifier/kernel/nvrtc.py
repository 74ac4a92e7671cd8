"""CUDA C++ to PTX on this machine, without a GPU: NVRTC from PyPI (the ``cuda`` extra:
``cuda-bindings``, ``nvidia-cuda-nvrtc-cu12``, the runtime headers of ``nvidia-cuda-runtime-cu12``,
CCCL from ``nvidia-cuda-cccl-cu12``, CUTLASS/CuTe from ``nvidia-cutlass``).

The compile runs in a child process with the caller's time limit (a template that never finishes
instantiating cannot hang the tool, a crash of the compiler cannot take it down), an address-space
limit under any hard limit in force, and an environment stripped to what Python and NVRTC need. It
sees a virtual file system (:mod:`~bankproof.verifier.kernel.includes`): the source and the user's
headers it reaches, in memory, and the toolkit's folders; the child cannot open anything else
(:mod:`~bankproof.verifier.kernel.sandbox`), so a source cannot make the tool read a file it was not
given, and no compile message can quote one.

>>> options("sm90", ["inc"], {"TILE": "32"})[:3]
['--gpu-architecture=sm_90a', '-lineinfo', '-std=c++17']
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError, TimeLimit
from bankproof.verifier.kernel.includes import gather, outside
from bankproof.verifier.kernel.sandbox import child_env

COMPILE_SECONDS = 300.0
MAX_SOURCE = 4 << 20  # a .cu file
_DEFINE_NAME = re.compile(r"[A-Za-z_]\w{0,127}")
_ARCH = {
    "sm80": "sm_80",
    "sm86": "sm_86",
    "sm89": "sm_89",
    "sm90": "sm_90a",
    "sm100": "sm_100a",
    "sm120": "sm_120",
}


@dataclass(frozen=True)
class Toolchain:
    """Where NVRTC and the headers are: ``include`` folders in search order (CUTLASS/CuTe, CCCL,
    the CUDA runtime's), and the NVRTC version."""

    include: tuple[str, ...]
    version: str


def toolchain() -> Toolchain:
    """The ``cuda`` extra's NVRTC and headers, or an :class:`InputError` saying how to install
    them (``pip install 'bankproof[cuda]'``)."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        raise InputError(
            "kernel",
            "source",
            "needs NVRTC to compile CUDA C++: pip install 'bankproof[cuda]' (or give the kernel's PTX)",
        ) from None
    err, major, minor = nvrtc.nvrtcVersion()
    include = []
    for mod, sub in (
        ("cutlass_library", "source/include"),
        ("nvidia.cuda_cccl", "include"),
        ("nvidia.cuda_runtime", "include"),
    ):
        path = _package_dir(mod)
        if path is not None and (path / sub).is_dir():
            include.append(str(path / sub))
    return Toolchain(tuple(include), f"{major}.{minor}")


def _package_dir(module: str) -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locs = list(spec.submodule_search_locations or [])
    return Path(locs[0]) if locs else (Path(spec.origin).parent if spec.origin else None)


def options(arch: str, include: list[str], defines: dict[str, str]) -> list[str]:
    """NVRTC's options for ``arch`` (sm90 compiles for ``sm_90a``, so wgmma and setmaxnreg are in)."""
    if arch not in _ARCH:
        raise InputError("kernel", "arch", f"must be one of {', '.join(_ARCH)} to compile CUDA", arch)
    opts = [
        f"--gpu-architecture={_ARCH[arch]}",
        "-lineinfo",
        "-std=c++17",
        "-default-device",
    ]  # no --no-source-include: a toolkit header's quoted includes are found beside it (cooperative
    # groups' details/); the program is named without a folder and compiled in an empty one
    opts += [f"-I{d}" for d in include]
    opts += [f"-D{k}={v}" if v != "" else f"-D{k}" for k, v in defines.items()]
    return opts


def check_defines(defines: dict[str, str]) -> dict[str, str]:
    """``-D`` names are identifiers and values have no newline (a define cannot smuggle an
    ``#include`` or a pragma in)."""
    for k, v in defines.items():
        if not _DEFINE_NAME.fullmatch(str(k)):
            raise InputError("kernel", "define", "must be an identifier (NAME or NAME=VALUE)", k)
        if any(c in str(v) for c in "\n\r\\#") or len(str(v)) > 256:
            raise InputError(
                "kernel", "define", "value must be one line of at most 256 characters without '#' or '\\'", v
            )
    return {str(k): str(v) for k, v in defines.items()}


def compile_ptx(
    source: str,
    name: str,
    arch: str = DEFAULT_ARCH,
    include: tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
    folder: str | None = None,
    timeout: float = COMPILE_SECONDS,
    headers: Mapping[str, str] | None = None,
) -> str:
    """PTX of CUDA C++ ``source`` (``name`` is how ``.file`` will name it), compiled by NVRTC in a
    confined child process that sees only :func:`~bankproof.verifier.kernel.includes.gather`'s
    files (the user's in memory) and the toolkit's folders, within ``timeout`` seconds. A compile
    error is an :class:`InputError` quoting NVRTC's log (which can quote only what was given)."""
    tc = toolchain()
    defines = check_defines(defines or {})
    user = [Path(d) for d in include]
    for d in user + ([Path(folder)] if folder else []):
        if not d.is_dir():
            raise InputError("kernel", "include", "is not a folder", str(d))
    files = gather(source, name, Path(folder) if folder else None, tuple(user), _given(headers))
    opts = options(arch, list(tc.include), defines)
    job = json.dumps(
        {
            "source": files.source,
            "name": _program_name(name),
            "options": opts,
            "headers": list(files.headers),
            "readable": list(tc.include) + _libraries(),
        }
    )
    if not timeout > 0:
        raise TimeLimit("kernel: the time limit ran out before the compile began")
    with tempfile.TemporaryDirectory(prefix="bankproof-nvrtc-") as empty:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bankproof.verifier.kernel.nvrtc_child"],
                input=job,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=empty,
                env=child_env(dict(os.environ), sys.path),
            )
        except subprocess.TimeoutExpired:
            raise TimeLimit(f"kernel: the compile did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        why = "ran out of memory" if "MemoryError" in done.stderr else f"exit {done.returncode}"
        raise InputError("kernel", "source", f"NVRTC failed compiling it ({why})")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise InputError("kernel", "source", "NVRTC's compile gave no answer") from None
    if not answer["ok"]:
        log = _errors_first(_not_given(answer["log"].strip()))
        raise InputError("kernel", "source", "does not compile: " + log[:700])
    ptx = answer["ptx"].replace(f'"{empty}/{_program_name(name)}"', f'"{empty}/{name}"')
    return _short_files(ptx, name, tc.include, empty, files.paths)


def _program_name(name: str) -> str:
    """The name NVRTC gets: no folder (NVRTC searches the folder of each input source)."""
    base = Path(name).name
    return base if base and base not in (".", "..") else "source.cu"


def _given(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Headers given as content (name -> text), checked: relative names, text of bounded size."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise InputError("kernel", "headers", "must map header names to their text", headers)
    out = {}
    for k, v in headers.items():
        if not isinstance(k, str) or outside(k) or len(k) > 1024:
            raise InputError("kernel", "headers", "names must be relative header names without '..'", k)
        if not isinstance(v, str) or len(v) > MAX_SOURCE:
            raise InputError("kernel", "headers", f"{k} must be text of at most {MAX_SOURCE} characters", k)
        out[k] = v
    return out


def _libraries() -> list[str]:
    """NVRTC's own folder (it loads its builtins library when the compile starts)."""
    path = _package_dir("nvidia.cuda_nvrtc")
    return [str(path)] if path is not None else []


_OPEN_FAILED = re.compile(r'(?:cannot|could not) open source file ("[^"\n]*")[^\n]*')


def _errors_first(log: str) -> str:
    """A compile log with its errors first (a header's deprecation warnings can fill a message
    before the error that stopped the compile).

    >>> _errors_first("a.cu(1): warning #1: w\\nb.cu(2): error: e\\n  x = 1;")
    'b.cu(2): error: e\\n  x = 1;\\na.cu(1): warning #1: w'
    """
    lines = log.splitlines()
    keep = [i for i, line in enumerate(lines) if re.search(r"\b(?:catastrophic )?error\b", line)]
    if not keep or keep[0] == 0:
        return log
    first = [lines[j] for i in keep for j in (i, i + 1, i + 2) if j < len(lines)]
    return "\n".join(dict.fromkeys(first + lines))


def _not_given(log: str) -> str:
    """NVRTC's words for a file it could not open, without why (which would tell a file outside
    exists): every such file is one that was not given."""
    return _OPEN_FAILED.sub(
        r"could not open \1: not given (the source's folder, -I folders and the toolkit are)", log
    )


def _short_files(
    ptx: str, name: str, system: tuple[str, ...], compiled_in: str = "", user: Mapping[str, str] | None = None
) -> str:
    """``.file`` names as a user reads them: the source as it was named, a user's header by its
    path (relative to the working folder where it is under it), a toolkit header relative to its
    include folder (``cute/swizzle.hpp``), so locations do not depend on where things are.
    ``compiled_in`` is the child's folder, which NVRTC puts before names given in memory."""
    cwd = os.getcwd().rstrip("/") + "/"
    inside = compiled_in.rstrip("/") + "/" if compiled_in else None

    def short(m: re.Match) -> str:
        path = m.group(2)
        if inside and path.startswith(inside):
            path = path[len(inside) :]
            real = (user or {}).get(path, "")
            if path != name and real and not real.startswith("given:"):
                path = real[len(cwd) :] if real.startswith(cwd) else real
        elif path == cwd + name:
            path = name
        if path == name:
            pass
        else:
            for d in system:
                if path.startswith(d.rstrip("/") + "/"):
                    path = path[len(d.rstrip("/")) + 1 :]
                    break
            else:
                path = path[len(cwd) :] if path.startswith(cwd) else path
        return f'{m.group(1)}"{path}"'

    return re.sub(r'^(\s*\.file\s+\d+\s+)"([^"]*)"', short, ptx, flags=re.M)
