"""One corpus job: compile a (configuration, arch) with Triton on the CPU (in a worker process:
a local one or a Ray task's) and turn the result into the corpus entry (the scan, the PTX
comparison, the ledger, the MMA descriptors). Imported by the corpus and by the engines that run
its jobs (:mod:`.dispatch`), which import nothing of the corpus itself.

>>> make_entry("k", "sm90", None, "SyntaxError: x").to_dict()
{'config': 'k', 'arch': 'sm90', 'error': 'SyntaxError: x'}
"""

from __future__ import annotations

import importlib.util
import os
import types
from dataclasses import replace
from pathlib import Path

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import note_input
from bankproof.verifier.results import FrozenMap
from bankproof.verifier.triton import lowering, pipeline
from bankproof.verifier.triton.corpus_records import CorpusEntry
from bankproof.verifier.triton.ledger_records import LedgerReport
from bankproof.verifier.triton.source import read_source


def kernel_function(name: str, kernels_file: str | None) -> object:
    """The ``@triton.jit`` function ``name`` of the kernels file (else of the built-in kernels)."""
    if kernels_file:
        mod = load_kernels_file(kernels_file)
    else:
        from bankproof.verifier.triton import corpus_kernels as mod
    if not hasattr(mod, name):
        raise InputError("corpus", "kernel", "is not defined in the kernels module", name)
    return getattr(mod, name)


def load_kernels_file(path: str) -> types.ModuleType:
    """The kernels file, imported as a module (it defines ``CONFIGS`` and its kernels)."""
    if not Path(path).is_file():
        raise InputError("corpus", "kernels", "is not a file", path)
    note_input(path)
    spec = importlib.util.spec_from_file_location("bankproof_user_kernels", path)
    if spec is None or spec.loader is None:
        raise InputError("corpus", "kernels", "is not a Python file", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - the user's file: a syntax error, NUL bytes, an exception it raises
        first = str(e).splitlines()[0][:200] if str(e) else ""
        raise InputError(
            "corpus", "kernels", f"cannot be imported ({type(e).__name__}: {first})", path
        ) from None
    return mod


def compile_config(config: dict, arch: str, kernels_file: str | None = None) -> object:
    """Triton's compiled kernel of one configuration for one arch (``asm``, ``metadata``)."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = kernel_function(config["kernel"], kernels_file)
    sig = config["signature"]
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t != "constexpr"}
    src = ASTSource(fn=fn, signature=sig, constexprs=config.get("constexprs", {}), attrs=attrs)
    opts = {"num_warps": config.get("num_warps", 4), "num_stages": config.get("num_stages", 3)}
    t = target.get(arch)
    return triton.compile(src, target=GPUTarget(*t.triton, t.warp), options=opts)


def compile_kernel(config: dict, arch: str, kernels_file: str | None = None) -> tuple[str, str]:
    """TTGIR and PTX of one configuration for one arch (runs in a worker process)."""
    k = compile_config(config, arch, kernels_file)
    return k.asm["ttgir"], k.asm.get("ptx", "")


def _job(args: tuple[dict, str, str | None]) -> tuple[str, str, tuple[str, str] | None, str | None]:
    config, arch, kernels_file = args
    try:
        return config["name"], arch, compile_kernel(config, arch, kernels_file), None
    except Exception as e:  # noqa: BLE001 - a configuration Triton rejects is reported, not fatal
        return config["name"], arch, None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def make_entry(name: str, arch: str, compiled: tuple[str, str] | None, error: str | None) -> CorpusEntry:
    """One (configuration, arch) result: the scan of its TTGIR, the PTX comparison, the ledger and
    the MMA descriptors (``error`` when it did not compile)."""
    if error or compiled is None:
        return CorpusEntry(config=name, arch=arch, error=error or "not compiled")
    ttgir, ptx = compiled
    modelled = "ledger" in target.get(arch).commands  # the ledger reads PTX only so far
    # read once (the scan, the ledger and the descriptors share the reading); no PTX where no ledger
    source = read_source(ttgir, f"{name}@{arch}.ttgir", ptx if modelled else None)
    got = pipeline.analyse(source, None, arch)
    if not modelled:  # (MMA descriptors are sm90/sm100's)
        note = target.get(arch).not_modeled("ledger")
        none = FrozenMap()
        return CorpusEntry(config=name, arch=arch, report=got.report, ttgir=ttgir, ptx_counts=none,
                           cp_async_modes=none, lowering=(), ledger=LedgerReport(note=note))  # fmt: skip
    counts, modes = (
        (FrozenMap(), FrozenMap()) if source.kernel is None else lowering.kernel_counts(source.kernel)
    )
    led = got.ledger
    if led is None:  # PTX the reader cannot read
        led = LedgerReport(unattributed=(f"the PTX could not be read: {got.ledger_error}",))
    # the whole-kernel check: every PTX shared-memory instruction owned, counted alike; and the MMA
    # descriptors against the TTGIR's nvmma_shared operands (a mismatch is a lowering disagreement)
    off = led.disagreements + tuple(f"unattributed: {u}" for u in led.unattributed)
    desc = got.descriptors
    if desc is not None:
        off += desc.mismatches or ()
        desc = replace(desc, mismatches=None)
    return CorpusEntry(config=name, arch=arch, report=got.report, ttgir=ttgir, ptx_counts=counts,
                       cp_async_modes=modes, lowering=off, ledger=led, descriptors=desc)  # fmt: skip


def _job_entry(args: tuple[dict, str, str | None]) -> tuple[tuple, CorpusEntry]:
    """Compile and scan one job (in a worker: a local process or a Ray task): the compile's
    output (what the results store keeps) and its entry."""
    job = _job(args)
    return job, make_entry(*job)


__all__ = ["compile_config", "compile_kernel", "make_entry"]
