"""CUDA C++ to PTX on this machine, without a GPU: NVRTC from PyPI (the ``cuda`` extra:
``cuda-bindings``, ``nvidia-cuda-nvrtc-cu12``, the runtime headers of ``nvidia-cuda-runtime-cu12``,
CCCL from ``nvidia-cuda-cccl-cu12``, CUTLASS/CuTe from ``nvidia-cutlass``).

The compile runs in a child process with a time limit (a template that never finishes instantiating
cannot hang the tool, a crash of the compiler cannot take it down). What a source may include is
checked before the compiler sees it: ``#include`` names must be literal, relative, free of ``..``,
and found in the source's folder, the folders the user gives, or the toolkit headers; so a source
cannot make the tool read a file it was not given.

>>> options("sm90", ["inc"], {"TILE": "32"})[:3]
['--gpu-architecture=sm_90a', '-lineinfo', '-std=c++17']
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bankproof.models.errors import InputError

COMPILE_SECONDS = 300.0
MAX_SOURCE = 4 << 20  # a .cu file
_INCLUDE = re.compile(r"^\s*#\s*include\b\s*(.*)$", re.M)
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
        "--no-source-include",
    ]
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


def check_includes(source: str, folders: list[Path], system: list[Path]) -> None:
    """Every ``#include`` of ``source`` (and, transitively, of the user's own headers it names) is a
    literal relative name found in ``folders`` (the source's own and the user's ``-I``) or in the
    toolkit's ``system`` folders; anything else is refused before compiling."""
    seen: set[Path] = set()
    todo = [source]
    while todo:
        text = todo.pop()
        for m in _INCLUDE.finditer(text):
            spec = m.group(1).split("//", 1)[0].strip()
            q = re.fullmatch(r'"([^"<>]+)"|<([^"<>]+)>', spec)
            if not q:
                raise InputError("kernel", "source", "#include must name a file literally", spec[:80])
            name = q.group(1) or q.group(2)
            if name.startswith("/") or ".." in Path(name).parts or "\\" in name:
                raise InputError(
                    "kernel", "source", "#include must be a relative name inside the include folders", name
                )
            if any((d / name).is_file() for d in system):
                continue  # the toolkit's headers: trusted, not scanned
            found = next((d / name for d in folders if (d / name).is_file()), None)
            if found is None:
                if _builtin(name):
                    continue
                raise InputError(
                    "kernel",
                    "source",
                    "#include names a file not found in the source's folder, the -I folders or the toolkit",
                    name,
                )
            found = found.resolve()
            if found not in seen:
                seen.add(found)
                todo.append(found.read_text(errors="replace")[:MAX_SOURCE])


def _builtin(name: str) -> bool:
    """Headers NVRTC provides itself."""
    return name in (
        "cuda_fp16.h",
        "cuda_bf16.h",
        "cuda_fp8.h",
        "cuda_runtime.h",
        "stdint.h",
        "cstdint",
        "cuda/std/cstdint",
        "cooperative_groups.h",
        "cuda_pipeline.h",
        "mma.h",
        "cuda_awbarrier.h",
    )


def compile_ptx(
    source: str,
    name: str,
    arch: str = "sm90",
    include: tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
    folder: str | None = None,
    timeout: float = COMPILE_SECONDS,
) -> str:
    """PTX of CUDA C++ ``source`` (``name`` is how ``.file`` will name it), compiled by NVRTC in a
    child process. A compile error is an :class:`InputError` quoting NVRTC's log."""
    tc = toolchain()
    defines = check_defines(defines or {})
    user = [Path(folder)] if folder else []
    user += [Path(d) for d in include]
    for d in user:
        if not d.is_dir():
            raise InputError("kernel", "include", "is not a folder", str(d))
    check_includes(source, user, [Path(d) for d in tc.include])
    opts = options(arch, [str(d.resolve()) for d in user] + list(tc.include), defines)
    job = json.dumps({"source": source, "name": name, "options": opts})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bankproof.verifier.kernel.nvrtc_child"],
            preexec_fn=_limit_memory,
            input=job,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
    except subprocess.TimeoutExpired:
        raise InputError("kernel", "source", f"did not compile within {timeout:g} s") from None
    if done.returncode != 0:
        raise InputError(
            "kernel", "source", f"NVRTC crashed compiling it (exit {done.returncode})", done.stderr[-300:]
        )
    answer = json.loads(done.stdout)
    if not answer["ok"]:
        log = answer["log"].strip()
        raise InputError("kernel", "source", "does not compile: " + log[:700])
    return _short_files(answer["ptx"], name, tc.include)


MEMORY_BYTES = 16 << 30  # the compiling process's address space (CUTLASS templates take a few GiB)


def _limit_memory() -> None:
    """In the compiling child: a template that never stops growing fails there, not the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def _short_files(ptx: str, name: str, system: tuple[str, ...]) -> str:
    """``.file`` names as a user reads them: the source as it was named, a toolkit header relative
    to its include folder (``cute/swizzle.hpp``), so locations do not depend on where things are."""
    cwd = os.getcwd().rstrip("/") + "/"

    def short(m: re.Match) -> str:
        path = m.group(2)
        if path == cwd + name or path == name:
            path = name
        else:
            for d in system:
                if path.startswith(d.rstrip("/") + "/"):
                    path = path[len(d.rstrip("/")) + 1 :]
                    break
            else:
                path = path[len(cwd) :] if path.startswith(cwd) else path
        return f'{m.group(1)}"{path}"'

    return re.sub(r'^(\s*\.file\s+\d+\s+)"([^"]*)"', short, ptx, flags=re.M)
