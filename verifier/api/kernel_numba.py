"""``bankproof.kernel_numba``: a numba-cuda kernel answered on its own Python lines. numba-cuda
compiles the ``@cuda.jit`` function for its signature to PTX on a machine without a GPU
(``cuda.compile_ptx`` with ``lineinfo``, NVVM from the ``cuda`` extra); its ``.loc`` lines name
the Python file and line, so every instruction, total and conflict of the account is reported at
the user's line.

The recipe, without this function: ``ptx, _ = numba.cuda.compile_ptx(fn.py_func, sig,
lineinfo=True, cc=(9, 0))``, then ``bankproof.kernel(ptx, language="ptx", block=...)``.

>>> try:
...     kernel_numba(len, "void()")
... except InputError as e:
...     print(e.field, e.problem)
fn must be a @cuda.jit function or a Python function
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace

from bankproof.models import target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.verifier.api.kernel import MAX_STEPS, kernel
from bankproof.verifier.api.numba_names import NUMBA_SMEM, rename
from bankproof.verifier.kernel.records import KernelResult

WHERE = "kernel_numba"
VERSIONS = "numba-cuda 0.30 (the numba extra)"


def kernel_numba(
    fn,
    signature,
    *,
    block: int | str | tuple = 128,
    grid: int | str | tuple = 1,
    cta: tuple | str = (0, 0, 0),
    dynamic_smem: int = 0,
    args: Mapping[str, int] | None = None,
    arch: str = DEFAULT_ARCH,
    max_steps: int = MAX_STEPS,
    time_limit: float = 120.0,
    buffers: Mapping[str, object] | None = None,
) -> KernelResult:
    """One CTA of the numba-cuda kernel ``fn`` (a ``@cuda.jit`` dispatcher or its Python function)
    compiled for ``signature`` (numba's: ``"void(float32[:, :], float32[:, :])"`` or a tuple of
    types), analysed as :func:`bankproof.kernel` analyses PTX, with its keywords (``args`` and
    ``buffers`` by PTX parameter name or position)."""
    py = getattr(fn, "py_func", fn)
    if not inspect.isfunction(py):
        raise InputError(WHERE, "fn", "must be a @cuda.jit function or a Python function", fn)
    cc = divmod(target.require(arch, "kernel", WHERE).cc, 10)  # sm90 -> (9, 0)
    try:
        from numba import cuda
    except ImportError:
        raise InputError(WHERE, "fn", f"needs {VERSIONS}: pip install 'bankproof[numba]'") from None
    try:
        ptx, _ = cuda.compile_ptx(py, signature, lineinfo=True, cc=cc)
    except Exception as e:  # noqa: BLE001 - numba's own errors are the user's to read
        raise InputError(
            WHERE, "fn", f"numba could not compile it: {type(e).__name__}: {str(e)[:300]}"
        ) from None
    result = kernel(
        ptx,
        language="ptx",
        block=block,
        grid=grid,
        cta=cta,
        dynamic_smem=dynamic_smem,
        args=args,
        arch=arch,
        max_steps=max_steps,
        time_limit=time_limit,
        buffers=buffers,
    )
    names = rename(py, _shared_symbols(ptx))
    if names:  # fixes name the Python variable, not numba's symbol
        result = replace(result, instructions=tuple(_renamed(i, names) for i in result.instructions))
    return replace(result, source=f"{py.__code__.co_filename} ({py.__name__}, numba)", kernel=py.__name__)


def _shared_symbols(ptx: str) -> list[tuple[str, int | None]]:
    from bankproof.verifier.ptx.module import kernel_code, read_module

    try:
        return [(s.name, s.size) for s in kernel_code(read_module(ptx), None).shared]
    except (InputError, ValueError, AttributeError):
        return []


def _renamed(i, names: dict[str, str]):
    if not i.fix:
        return i
    fix = NUMBA_SMEM.sub(lambda m: f"{names[m.group(0)]}" if m.group(0) in names else m.group(0), i.fix)
    return replace(i, fix=fix)


__all__ = ["kernel_numba"]
