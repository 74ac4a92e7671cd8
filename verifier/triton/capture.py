"""Triton launches captured from a real program: every compile it loads (TTGIR and PTX, from
Triton's own cache files) and, for kernels launched through ``@triton.jit``, each distinct launch
shape (grid and integer arguments) with the buffers its shared-memory control flow and addresses
load from, so ``bankproof triton replay DIR`` answers the whole program without a GPU.

Only Triton's public hooks (``triton.knobs.runtime``, Triton 3.4 and later; used with 3.6 and
3.9): ``kernel_load_end_hook`` names each loaded compile's files (Inductor's kernels included),
``jit_post_compile_hook`` gives each ``@triton.jit`` function, whose ``launch_metadata`` (the
public way to attach data to a launch, as Triton's profiler does; one set by the program is kept
and chained) hands the launch's grid and arguments to ``launch_enter_hook``. A kernel compiled
without ``JITFunction.run`` (``torch.compile``'s Inductor calls ``triton.compile`` itself) gets
the same ``launch_metadata`` when its compile loads: its ``JITFunction`` is found by the kernel's
name in the loaded modules (Inductor's ``CachingAutotuner.fn``). While capturing, Inductor is
asked (its public ``torch._inductor.config``) to launch through Triton's launcher, whose hooks
these are (``use_static_cuda_launcher = False``) and to compile in the process
(``compile_threads = 1``); both are put back as the capture ends. Kernels launched another way
are captured as compiles: their replay answers per CTA with formulas where a value would be
needed.

What is kept, bounded: at most :data:`LAUNCHES_PER_COMPILE` launch shapes per compile and
:data:`MAX_LAUNCHES` in all; of a launch's tensors only those the PTX loads values from that
decide control flow or addresses (:func:`~bankproof.verifier.kernel.pointers.loaded_params`),
each at most :data:`MAX_BYTES` (a larger one is named, not copied).

>>> cap = Capture("unused")
>>> cap.limits()["per_compile"], cap.limits()["bytes_per_buffer"]
(4, 16777216)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from bankproof.models.errors import InputError
from bankproof.verifier.triton.capture_inductor import inductor_settings, jit_functions, named

SCHEMA = 1
LAUNCHES_PER_COMPILE = 4
MAX_LAUNCHES = 256
MAX_BYTES = 16 << 20
ENV = "BANKPROOF_CAPTURE"


class Capture:
    """One capture directory being written (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike):
        self.dir = Path(folder)
        self.compiles: dict[str, dict] = {}
        self.functions: dict[int, str] = {}  # loaded function handle -> compile hash
        self.launches: list[dict] = []
        self.shapes: set[tuple] = set()
        self.needed: dict[str, frozenset[str]] = {}  # compile hash -> arguments whose loaded values decide
        self.seen_per_compile: dict[str, int] = {}
        self.errors: list[str] = []
        self.chained: list[tuple[object, object]] = []  # (JITFunction, its launch_metadata before)

    def limits(self) -> dict:
        return {"per_compile": LAUNCHES_PER_COMPILE, "launches": MAX_LAUNCHES, "bytes_per_buffer": MAX_BYTES}

    # ----- what Triton's hooks call ------------------------------------------------------------
    def guarded(self, hook, /, *args, **kwargs) -> None:
        """A hook's work, never failing the program it runs in: an error is kept in the record
        (``errors``) and the program goes on."""
        try:
            hook(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the user's program must not fail for a capture
            if len(self.errors) < 100:
                self.errors.append(f"{getattr(hook, '__name__', 'hook')}: {type(e).__name__}: {str(e)[:200]}")
                with contextlib.suppress(OSError):
                    self.save()

    def on_load(self, *args, **kwargs) -> None:
        self.guarded(self._on_load, *args, **kwargs)

    def on_compile(self, **kwargs) -> None:
        self.guarded(self._on_compile, **kwargs)

    def on_launch(self, lazy) -> None:
        self.guarded(self._on_launch, lazy)

    def _on_load(self, module, function, name, metadata_group, hash, **_) -> None:
        """``kernel_load_end_hook``: the compile's TTGIR and PTX, from Triton's cache files."""
        texts = {}
        for file, path in dict(metadata_group or {}).items():
            for ext in ("ttgir", "ptx"):
                if str(file).endswith("." + ext):
                    with contextlib.suppress(OSError, UnicodeDecodeError):
                        texts[ext] = Path(path).read_text()
        if "ttgir" not in texts:
            return
        self.functions[_handle(function)] = str(hash)
        if str(hash) in self.compiles:  # loaded again (another device): its function is chained
            return
        self.record_compile(str(hash), str(name), texts["ttgir"], texts.get("ptx"))
        for jit in jit_functions(str(name)):  # a kernel compiled outside JITFunction.run (Inductor's)
            self.chain(jit)

    def record_compile(self, key: str, name: str, ttgir: str, ptx: str | None) -> None:
        """One compile's texts (once per hash)."""
        if key in self.compiles:
            return
        (self.dir / "compiles").mkdir(parents=True, exist_ok=True)
        (self.dir / "compiles" / f"{key}.ttgir").write_text(ttgir)
        entry = {"name": name, "ttgir": f"compiles/{key}.ttgir"}
        if ptx:
            (self.dir / "compiles" / f"{key}.ptx").write_text(ptx)
            entry["ptx"] = f"compiles/{key}.ptx"
        self.compiles[key] = entry
        names = _arg_names(ttgir)  # the argument names of the buffers a launch keeps, read once
        self.needed[key] = frozenset(names[i] for i in _needed(ptx) if i < len(names))
        self.save()

    def _on_compile(self, *, fn, **_) -> None:
        """``jit_post_compile_hook``: chain this capture's ``launch_metadata`` into the function."""
        jit = getattr(fn, "jit_function", None)
        if jit is not None:
            self.chain(jit)

    def chain(self, jit) -> None:
        """Chain this capture's ``launch_metadata`` into a ``JITFunction`` (once)."""
        if getattr(jit.launch_metadata, "_bankproof", None) is self:
            return
        self.chained.append((jit, jit.launch_metadata))
        jit.launch_metadata = self.metadata_fn(jit.launch_metadata, jit)

    def unchain(self) -> None:
        """Put back each ``launch_metadata`` this capture chained (where it is still this one's)."""
        for jit, before in reversed(self.chained):
            if getattr(jit.launch_metadata, "_bankproof", None) is self:
                jit.launch_metadata = before
        self.chained.clear()

    def metadata_fn(self, before, jit=None):
        def launch_metadata(grid, metadata, args):
            out = dict(before(grid, metadata, args) or {}) if before is not None else {}
            out["bankproof_launch"] = (grid, getattr(metadata, "hash", None), named(jit, args))
            return out

        launch_metadata._bankproof = self
        return launch_metadata

    def _on_launch(self, lazy) -> None:
        """``launch_enter_hook``: the launch's grid and arguments, where the function carries them."""
        data = lazy.get() if hasattr(lazy, "get") else dict(lazy or {})
        got = data.get("bankproof_launch")
        key = self.functions.get(_handle(data.get("function")))
        if got is None:
            return
        grid, meta_hash, args = got
        self.record_launch(key or str(meta_hash), grid, args)

    def record_launch(self, key: str, grid, args: dict) -> None:
        """One launch of compile ``key``: its grid, integer arguments and needed buffers (once per
        distinct grid and integers; bounded per compile and in all)."""
        if key not in self.compiles or len(self.launches) >= MAX_LAUNCHES:
            return
        grid = tuple(int(g) for g in (tuple(grid) + (1, 1, 1))[:3])
        ints = {
            k: int(v) for k, v in args.items() if isinstance(v, (int, np.integer)) and not isinstance(v, bool)
        }
        shape = (key, grid, tuple(sorted(ints.items())))
        if shape in self.shapes or self.seen_per_compile.get(key, 0) >= LAUNCHES_PER_COMPILE:
            return
        self.shapes.add(shape)
        self.seen_per_compile[key] = self.seen_per_compile.get(key, 0) + 1
        n = len(self.launches)
        wanted = self.needed.get(key, frozenset())
        buffers, skipped = {}, {}
        for name in sorted(wanted):
            value = args.get(name)
            if value is None:
                buffers[name] = None  # a null pointer (Triton passes None as 0)
                continue
            raw, why = _bytes(value)
            if raw is None:
                skipped[name] = why
                continue
            (self.dir / "launches").mkdir(parents=True, exist_ok=True)
            rel = f"launches/{n}.{name}.npy"
            np.save(self.dir / rel, raw, allow_pickle=False)
            buffers[name] = rel
        self.launches.append(
            {"compile": key, "grid": list(grid), "args": ints, "buffers": buffers, "skipped": skipped}
        )
        self.save()

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        record = {
            "schema": SCHEMA,
            "limits": self.limits(),
            "compiles": self.compiles,
            "launches": self.launches,
            "errors": self.errors,
        }
        tmp = self.dir / "capture.json.tmp"
        tmp.write_text(json.dumps(record, indent=1))
        tmp.replace(self.dir / "capture.json")


def _handle(function) -> int:
    try:
        return int(function)
    except (TypeError, ValueError):
        return id(function)


def _needed(ptx: str | None) -> frozenset[int]:
    """The PTX parameter indices whose buffers the analysis reads values from."""
    if not ptx:
        return frozenset()
    from bankproof.verifier.kernel.sites import loaded_params
    from bankproof.verifier.ptx.module import kernel_code, read_module

    try:
        code = kernel_code(read_module(ptx), None)
    except (InputError, ValueError, KeyError, IndexError):
        return frozenset()
    names = [n for _, n in code.params]
    return frozenset(names.index(p) for p in loaded_params(code) if p in names)


def _arg_names(ttgir: str) -> list[str]:
    from bankproof.verifier.triton.sites import read_sites

    try:
        return list(read_sites(ttgir)[2])
    except (InputError, ValueError, KeyError, IndexError):
        return []


def _bytes(value) -> tuple[np.ndarray | None, str]:
    """A tensor's bytes on the host, from its first element to its last (its strides' span), or
    why not."""
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "data_ptr") and hasattr(value, "element_size"):
        n = value.element_size() * _span(value)
        if n > MAX_BYTES:
            return None, f"{n} bytes, more than the {MAX_BYTES} a capture keeps"
        flat = (
            value.detach().as_strided((_span(value),), (1,)) if value.numel() else value.detach().reshape(-1)
        )
        try:
            import torch

            arr = flat.contiguous().view(torch.uint8).cpu().numpy()
        except (ImportError, RuntimeError, TypeError) as e:
            return None, f"not copied to the host ({type(e).__name__})"
    elif hasattr(value, "__cuda_array_interface__"):  # a CuPy array or any CUDA array
        try:
            import cupy

            arr = cupy.asarray(value).get()
        except (ImportError, TypeError, ValueError) as e:
            return None, f"not copied to the host ({type(e).__name__})"
    else:
        return None, f"a {type(value).__name__}, not a tensor"
    if arr.nbytes > MAX_BYTES:
        return None, f"{arr.nbytes} bytes, more than the {MAX_BYTES} a capture keeps"
    return np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=np.uint8), ""


def _span(t) -> int:
    if not t.numel():
        return 0
    return 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride(), strict=True))


@contextlib.contextmanager
def capture(folder: str | os.PathLike) -> Iterator[Capture]:
    """Capture every Triton compile loaded and launch made inside (see the module docstring);
    the hooks are removed, and any the program had put back, as it leaves.

    >>> import tempfile
    >>> with capture(tempfile.mkdtemp()) as cap:
    ...     pass
    >>> cap.launches
    []
    """
    try:
        from triton import knobs

        rt = knobs.runtime
        rt.kernel_load_end_hook.add, rt.launch_enter_hook.add  # noqa: B018 - the hooks this needs
    except (ImportError, AttributeError):
        raise InputError(
            "capture", "triton", "needs Triton 3.4 or later (triton.knobs.runtime's hooks)"
        ) from None
    cap = Capture(folder)
    cap.save()
    before = rt.jit_post_compile_hook

    def post_compile(**kw):
        cap.on_compile(**kw)
        return before(**kw) if before is not None else None

    rt.kernel_load_end_hook.add(cap.on_load)
    rt.launch_enter_hook.add(cap.on_launch)
    rt.jit_post_compile_hook = post_compile
    inductor = inductor_settings()
    try:
        yield cap
    finally:
        rt.kernel_load_end_hook.remove(cap.on_load)
        rt.launch_enter_hook.remove(cap.on_launch)
        if rt.jit_post_compile_hook is post_compile:
            rt.jit_post_compile_hook = before
        cap.unchain()
        inductor()
        cap.save()


def install_from_env() -> None:
    """``BANKPROOF_CAPTURE=DIR``: capture the whole process into DIR (``bankproof capture`` runs a
    command so); nothing when it is unset or Triton is not installed."""
    folder = os.environ.get(ENV)
    if not folder:
        return
    try:
        import triton  # noqa: F401
    except ImportError:
        return
    ctx = capture(folder)
    ctx.__enter__()
    import atexit

    atexit.register(ctx.__exit__, None, None, None)


__all__ = ["Capture", "capture", "install_from_env", "ENV", "SCHEMA", "MAX_BYTES"]
