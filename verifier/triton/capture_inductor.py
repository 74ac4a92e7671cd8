"""What a capture needs of kernels compiled without ``JITFunction.run`` (``torch.compile``'s
Inductor calls ``triton.compile`` and launches with only the non-constexpr arguments): their
``JITFunction`` found by the kernel's name, their arguments named, and Inductor asked to launch
through Triton's launcher and compile in the process while capturing (see
:mod:`bankproof.verifier.triton.capture`).

>>> class P:
...     def __init__(self, name, c): self.name, self.is_constexpr = name, c
>>> class J:
...     params = [P("x", False), P("n", False), P("BLOCK", True)]
>>> named(J(), {"x": 1, "BLOCK": 8})
{'x': 1, 'n': 8}
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Mapping


def named(jit, args: Mapping[str, object]) -> Mapping[str, object]:
    """The launch's arguments by name. Triton zips the function's argument names with the values
    the launcher passes; a launcher passing only the non-constexpr ones (Inductor's) gets them
    named by the non-constexpr parameters."""
    params = getattr(jit, "params", None)
    if not params or len(args) >= len(params):
        return args
    names = [p.name for p in params if not getattr(p, "is_constexpr", False)]
    return dict(zip(names, args.values(), strict=True)) if len(names) == len(args) else args


def jit_functions(name: str) -> list:
    """The ``JITFunction`` objects named ``name``: a loaded module's attribute of that name (the
    function, or an autotuner wrapping it in ``fn``), else any alive in the process."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return []
    found = []
    for mod in list(sys.modules.values()):
        names = getattr(mod, "__dict__", None)  # (not getattr(mod, name): a module's __getattr__ may run)
        obj = names.get(name) if isinstance(names, dict) else None
        for _ in range(4):  # Autotuner(Heuristics(JITFunction)) and the like
            if obj is None or isinstance(obj, JITFunction):
                break
            obj = getattr(obj, "fn", None)
        if isinstance(obj, JITFunction) and obj not in found:
            found.append(obj)
    if not found:
        found = [o for o in gc.get_objects() if isinstance(o, JITFunction) and o.__name__ == name]
    return found


INDUCTOR = {"use_static_cuda_launcher": False, "compile_threads": 1}
INDUCTOR_ENV = {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": "0", "TORCHINDUCTOR_COMPILE_THREADS": "1"}


def inductor_settings() -> Callable[[], None]:
    """Ask Inductor to launch through Triton's launcher and compile in the process (see the module
    docstring): its config where PyTorch is loaded, else the environment it reads when it loads.
    Returns what puts them back."""
    undo = []
    config = None
    if "torch" in sys.modules:
        with contextlib.suppress(Exception):  # a PyTorch without Inductor: nothing to ask
            import torch._inductor.config as config
    if config is not None:
        for k, v in INDUCTOR.items():
            if hasattr(config, k):
                undo.append((setattr, config, k, getattr(config, k)))
                setattr(config, k, v)
    else:
        for k, v in INDUCTOR_ENV.items():
            if k not in os.environ:
                undo.append((_unset, os.environ, k, None))
                os.environ[k] = v

    def put_back() -> None:
        for fn, obj, k, v in reversed(undo):
            fn(obj, k, v)

    return put_back


def _unset(env, key, _) -> None:
    env.pop(key, None)
