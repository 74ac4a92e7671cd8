"""``bankproof.kernel_cute``: a CuTe DSL kernel answered on its own Python lines. The CuTe DSL
compiles a ``@cute.jit`` function for its arguments (fake tensors: ``cute.runtime.make_fake_tensor``)
to PTX on a machine without a GPU; with ``--generate-line-info`` its ``.loc`` lines name the
Python file and line, so every instruction, total and conflict is reported at the user's line.
The PTX is kept in a temporary folder (``--keep-ptx --dump-dir``), read from the compile's
artifacts and the folder removed: nothing is written where the user did not ask.

The recipe, without this function: ``c = cute.compile(fn, *arguments, options="--keep-ptx --dump-dir=D
--gpu-arch=sm_90a --generate-line-info")``, then ``bankproof.kernel(c.artifacts.PTX,
language="ptx", block=...)``.

>>> gpu_arch("sm90"), gpu_arch("sm100"), gpu_arch("sm80")
('sm_90a', 'sm_100a', 'sm_80')
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import replace

from bankproof.models import target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.errors import InputError
from bankproof.verifier.api.kernel import MAX_STEPS, kernel
from bankproof.verifier.kernel.records import KernelResult

WHERE = "kernel_cute"
VERSIONS = "the CuTe DSL (nvidia-cutlass-dsl 4.8)"


def gpu_arch(arch: str) -> str:
    """The CuTe DSL's ``--gpu-arch`` for a bankproof arch: the ``a`` variant where the arch has
    architecture-specific instructions (sm90's wgmma, sm100's tcgen05), as the DSL names them."""
    cc = target.require(arch, "kernel", WHERE).cc
    return f"sm_{cc}a" if cc >= 90 else f"sm_{cc}"


def kernel_cute(
    fn,
    arguments: tuple = (),
    *,
    block: int | str | tuple | None = None,
    grid: int | str | tuple = 1,
    cta: tuple | str = (0, 0, 0),
    dynamic_smem: int = 0,
    args: Mapping[str, int] | None = None,
    arch: str = DEFAULT_ARCH,
    max_steps: int = MAX_STEPS,
    time_limit: float = 120.0,
    buffers: Mapping[str, object] | None = None,
) -> KernelResult:
    """One CTA of the kernel a CuTe DSL ``@cute.jit`` function ``fn`` launches, compiled for
    ``arguments`` (a tuple of fake tensors and scalars, as ``cute.compile`` takes them) and
    analysed as :func:`bankproof.kernel` analyses PTX, with its keywords (``args`` and ``buffers``
    by PTX parameter name or position); ``block`` defaults to the kernel's own ``.reqntid`` (the
    block its launch names)."""
    flavour = gpu_arch(arch)
    if not callable(fn):
        raise InputError(WHERE, "fn", "must be a @cute.jit function", fn)
    if not isinstance(arguments, (tuple, list)):
        raise InputError(WHERE, "arguments", "must be a tuple of the function's arguments", arguments)
    try:
        import cutlass.cute as cute
    except ImportError:
        raise InputError(WHERE, "fn", f"needs {VERSIONS}: pip install 'bankproof[cute-dsl]'") from None
    with tempfile.TemporaryDirectory(prefix="bankproof-cute-") as folder:
        flags = f"--keep-ptx --dump-dir={folder} --gpu-arch={flavour} --generate-line-info"
        try:
            compiled = cute.compile(fn, *tuple(arguments), options=flags)
            ptx = compiled.artifacts.PTX
        except Exception as e:  # noqa: BLE001 - the DSL's own errors are the user's to read
            raise InputError(WHERE, "fn", f"the CuTe DSL could not compile it: {type(e).__name__}: "
                             f"{str(e)[:300]}") from None  # fmt: skip
    if not isinstance(ptx, str) or not ptx.strip():
        raise InputError(WHERE, "fn", "the CuTe DSL kept no PTX for it (a function with no kernel?)")
    if block is None:
        block = _reqntid(ptx)
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
    name = getattr(fn, "__name__", "kernel")
    return replace(result, source=f"{_file(fn)} ({name}, CuTe DSL)")


def _reqntid(ptx: str) -> tuple[int, ...]:
    """The block a kernel's ``.reqntid`` names (the DSL writes its launch's block there)."""
    from bankproof.verifier.ptx.module import kernel_code, read_module

    hint = kernel_code(read_module(ptx), None).block_hint
    if not hint:
        raise InputError(WHERE, "block", "is needed: the kernel names no .reqntid")
    return tuple(hint)


def _file(fn) -> str:
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None) or getattr(fn, "__code__", None)
    return code.co_filename if code is not None else "<CuTe DSL>"


__all__ = ["gpu_arch", "kernel_cute"]
