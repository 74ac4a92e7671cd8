"""The compiling child's confinement: what it may open, how much memory it may take, which
environment it sees.

- **Files**: Linux Landlock (unprivileged, kernel 5.13 and later) leaves the child able to open
  only the folders it is given (the toolkit's headers) and nothing else: a name the include scan
  of :mod:`bankproof.verifier.kernel.includes` did not see (one a macro pastes into
  ``__has_include``) still cannot open a file. Where the kernel has no Landlock the scan is the
  only guard, and :func:`confine` says so.
- **Memory**: an address-space limit that never asks above the hard limit already in force (a CI
  container's ``ulimit -v``).
- **Environment**: only what NVRTC and Python need (:func:`child_env`).

>>> sorted(child_env({"HOME": "/root", "AWS_SECRET": "x", "PATH": "/bin"}, ["/s"]))
['LANG', 'PATH', 'PYTHONHASHSEED', 'PYTHONNOUSERSITE', 'PYTHONPATH']
"""

from __future__ import annotations

import ctypes
import os
import struct

MEMORY_BYTES = 16 << 30  # the compiling process's address space (CUTLASS templates take a few GiB)
_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the Landlock system calls (one number on every arch)
_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read a file, read a folder


def memory_limit(want: int = MEMORY_BYTES) -> None:
    """Lower this process's address space to ``want``, or to the hard limit where that is lower
    (never raised past it: that would fail, and the compile with it)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def child_env(env: dict[str, str], path: list[str]) -> dict[str, str]:
    """The child's environment: the same Python packages (``path``), nothing of the user's
    (no tokens, keys or home)."""
    return {
        "PATH": env.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join(p for p in path if p),
        "PYTHONHASHSEED": "0",
        "PYTHONNOUSERSITE": "1",
        "LANG": "C.UTF-8",
    }


def confine(readable: list[str]) -> bool:
    """Landlock this process: from now on it opens files only under ``readable`` (read-only),
    writes nowhere. True where the kernel enforces it, False where it has no Landlock."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return False
    handled = (1 << 13) - 1  # ABI 1: execute, write, read, read dir, remove, make (every kind)
    if abi >= 2:
        handled |= 1 << 13  # refer (links and renames across folders)
    if abi >= 3:
        handled |= 1 << 14  # truncate
    attr = struct.pack("=Q", handled)
    fd = libc.syscall(_CREATE, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return False
    try:
        for path in readable:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            rule = struct.pack("=Qi", _READ, pfd)
            ok = libc.syscall(
                _ADD_RULE, ctypes.c_int(fd), ctypes.c_int(1), ctypes.c_char_p(rule), ctypes.c_uint32(0)
            )
            os.close(pfd)
            if ok != 0:
                raise OSError(ctypes.get_errno(), f"landlock rule for {path}")
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, which Landlock requires
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if libc.syscall(_RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
    return True


__all__ = ["confine", "memory_limit", "child_env", "MEMORY_BYTES"]
