"""The built-in Triton corpus: kernel configurations compiled to TTGIR on the CPU (Triton needed,
no GPU), scanned, and compared access by access with a committed baseline.

A configuration is ``{"name", "kernel", "signature", "constexprs", "num_warps", "num_stages"}``
and optionally ``"archs"`` (the targets it is written for, e.g. fp8 needs sm89+: others are not
compiled, rather than reported as failures);
``kernel`` names a function in :mod:`verifier.triton.corpus_kernels` or, for ``--kernels FILE.py``,
in that file, which also defines ``CONFIGS`` (a list of such dicts). Every pointer and integer
argument gets ``tt.divisibility = 16`` as a typical launch would.

>>> len(builtin_configs()) >= 40
True
>>> access_key({"config": "mm", "arch": "sm80"}, {"buffer": "%a"}, 0, {"op": "ttg.local_load"})
'mm@sm80 %a #0 ttg.local_load'
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import BASELINE_BYTES, read_text
from bankproof.verifier.triton import descriptors, ledger, lowering
from bankproof.verifier.triton.corpus_configs import builtin_configs
from bankproof.verifier.triton.results import CorpusResult
from bankproof.verifier.triton.scan import scan_text, scan_unchecked

ALL_ARCHS = list(target.ARCHS)
def _kernel(name: str, kernels_file: str | None):
    if kernels_file:
        mod = _load_file(kernels_file)
    else:
        from bankproof.verifier.triton import corpus_kernels as mod
    if not hasattr(mod, name):
        raise InputError("corpus", "kernel", "is not defined in the kernels module", name)
    return getattr(mod, name)


def _load_file(path: str):
    if not Path(path).is_file():
        raise InputError("corpus", "kernels", "is not a file", path)
    spec = importlib.util.spec_from_file_location("bankproof_user_kernels", path)
    if spec is None or spec.loader is None:
        raise InputError("corpus", "kernels", "is not a Python file", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compile_config(config: dict, arch: str, kernels_file: str | None = None):
    """Triton's compiled kernel of one configuration for one arch (``asm``, ``metadata``)."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _kernel(config["kernel"], kernels_file)
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


def access_key(entry: dict, buffer: dict, index: int, access: dict) -> str:
    return f"{entry['config']}@{entry['arch']} {buffer['buffer']} #{index} {access['op']}"


COMPILE_LIMIT_S = 300.0  # per (configuration, arch): a compile past it is reported, not waited for


def make_entry(name: str, arch: str, compiled: tuple[str, str] | None, error: str | None) -> dict:
    """One (configuration, arch) result: the scan of its TTGIR, the PTX comparison, the ledger and
    the MMA descriptors (``error`` when it did not compile)."""
    entry: dict = {"config": name, "arch": arch}
    if error or compiled is None:
        entry["error"] = error
        return entry
    ttgir, ptx = compiled
    entry["report"] = scan_text(ttgir, f"{name}@{arch}.ttgir")
    entry["ttgir"] = ttgir
    if "ledger" not in target.get(arch).commands:  # the ledger reads PTX only so far
        entry["ptx_counts"], entry["cp_async_modes"], entry["lowering"] = {}, {}, []
        note = target.get(arch).not_modeled("ledger")
        entry["ledger"] = {"entries": [], "unattributed": [], "disagreements": [], "note": note}
        _descriptors(entry, ttgir, ptx, arch)
        return entry
    entry["ptx_counts"] = lowering.ptx_counts(ptx)
    entry["cp_async_modes"] = lowering.ptx_cp_async_modes(ptx)
    try:
        led = ledger.build(entry["report"], ttgir, ptx)
    except (InputError, ValueError, KeyError, IndexError) as e:  # PTX the reader cannot read
        led = {"entries": [], "unattributed": [f"the PTX could not be read: {e}"], "disagreements": []}
    entry["ledger"] = led
    # the whole-kernel check: every PTX shared-memory instruction owned, counted alike
    entry["lowering"] = led["disagreements"] + [f"unattributed: {u}" for u in led["unattributed"]]
    _descriptors(entry, ttgir, ptx, arch)
    return entry


def _job_entry(args: tuple[dict, str, str | None]) -> dict:
    """Compile and scan one job (in a worker: a local process or a Ray task)."""
    return make_entry(*_job(args))


def run_corpus(
    configs: list[dict],
    archs: list[str],
    kernels_file: str | None = None,
    workers: int = 0,
    limit_s: float = COMPILE_LIMIT_S,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    address: str | None = None,
    results_dir: str | None = None,
) -> list[dict]:
    """Compile every (configuration, arch) in parallel workers (each compile at most ``limit_s``
    seconds) and scan each (:func:`make_entry`), on this machine (``engine="local"``) or as Ray
    tasks (``"ray"``, on the cluster at ``address``); with ``results_dir``, results already stored
    there are read instead of computed, and each new one is stored as it arrives."""
    from bankproof.verifier.triton import dispatch

    jobs = [(c, a, kernels_file) for a in archs for c in configs if a in c.get("archs", ALL_ARCHS)]
    return dispatch.run(jobs, engine=engine, address=address, workers=workers, limit_s=limit_s,
                        progress=progress, results_dir=results_dir)  # fmt: skip


def _descriptors(entry: dict, ttgir: str, ptx: str, arch: str) -> None:
    """The MMA descriptors in the PTX against the TTGIR's nvmma_shared operands
    (:mod:`.descriptors`); a mismatch is a lowering disagreement, an undecided one is counted."""
    if arch not in ("sm90", "sm100") or not re.search(r"wgmma\.mma_async|tcgen05\.mma", ptx):
        return
    try:
        checks = descriptors.check(ttgir, ptx, arch)
    except (InputError, ValueError, KeyError, IndexError) as e:
        entry["descriptors"] = {"checked": 0, "agree": 0, "undecided": 0, "note": f"not read: {e}"}
        return
    bad = [f"descriptor at PTX line {c.line} ({c.operand}, {c.encoding}): {c.why}"
           for c in checks if c.ok is False]  # fmt: skip
    entry["descriptors"] = {"checked": len(checks), "agree": sum(c.ok is True for c in checks),
                            "undecided": sum(c.ok is None for c in checks)}  # fmt: skip
    entry["lowering"] = entry["lowering"] + bad


def flat_accesses(entries: list[dict]) -> dict[str, int]:
    """``{access key: wavefronts}`` for every analysed access (the baseline's content)."""
    out = {}
    for e in entries:
        for b in e.get("report", {}).get("buffers", []):
            for i, a in enumerate(b["accesses"]):
                if "wavefronts" in a:
                    out[access_key(e, b, i, a)] = a["wavefronts"]
    return out


def compare(entries: list[dict], baseline: dict[str, int]) -> list[str]:
    """Accesses that cost more than the baseline, or that the baseline has and this run lost."""
    now = flat_accesses(entries)
    worse = [
        f"{k}: {now[k]} wavefronts, baseline {v}" for k, v in baseline.items() if k in now and now[k] > v
    ]
    ran = {f"{e['config']}@{e['arch']}" for e in entries}
    gone = [f"{k}: missing from this run" for k in baseline if k not in now and k.split(" ", 1)[0] in ran]
    return worse + gone


def load_baseline(path: str) -> dict[str, int]:
    try:
        data = json.loads(read_text(path, BASELINE_BYTES, "corpus", "baseline"))
    except (json.JSONDecodeError, RecursionError) as e:
        raise InputError("corpus", "baseline", f"is not JSON ({type(e).__name__})", path) from None
    acc = data.get("accesses") if isinstance(data, dict) else None
    if not isinstance(acc, dict) or not all(isinstance(v, int) for v in acc.values()):
        raise InputError("corpus", "baseline", "must be {'accesses': {key: wavefronts}}", path)
    return acc


def check_corpus(
    archs: list[str],
    kernels_file: str | None = None,
    baseline: str | None = None,
    workers: int = 0,
    compare_baseline: bool = True,
    limit_s: float = COMPILE_LIMIT_S,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    address: str | None = None,
    results_dir: str | None = None,
    expand: int = 0,
    seed: int = 0,
) -> CorpusResult:
    """Compile the corpus (the built-in configurations, or ``kernels_file``'s ``CONFIGS``) for
    ``archs``, scan it, and compare each access with ``baseline`` (a file written by
    ``--update-baseline``); ``progress(done, total)`` as each compile ends."""
    for a in archs:
        if a not in ALL_ARCHS:
            raise InputError("triton corpus", "arch", f"must be among {', '.join(ALL_ARCHS)}", a)
    if kernels_file:
        mod = _load_file(kernels_file)
        configs = getattr(mod, "CONFIGS", None)
        if not isinstance(configs, list) or not configs:
            raise InputError(
                "triton corpus", "kernels", "must define CONFIGS, a non-empty list", kernels_file
            )
    else:
        configs = builtin_configs()
    if expand:
        from bankproof.verifier.triton.corpus_generate import expand_configs

        configs = expand_configs(configs, expand, seed)
    base = load_baseline(baseline) if baseline and compare_baseline else None
    entries = run_corpus(configs, archs, kernels_file, workers, limit_s, progress, engine, address,
                         results_dir)  # fmt: skip
    worse = compare(entries, base) if base is not None else []
    gaps = [
        f"{access_key(e, b, i, a)}: buffer {b['wavefronts']}, optimum {b['optimal_wavefronts']}"
        for e in entries
        for b in e.get("report", {}).get("buffers", [])
        for i, a in enumerate(b["accesses"])
        if b["gap"]
    ]
    return CorpusResult(1, tuple(entries), tuple(worse), tuple(gaps), tuple(unchecked(entries)))


def unchecked(entries: list[dict]) -> list[str]:
    """What the corpus could not check: configurations that did not compile, accesses not
    analysed, buffers whose optimum is unknown (a gate must not pass on them silently)."""
    out = []
    for e in entries:
        where = f"{e['config']}@{e['arch']}"
        if "report" not in e:
            out.append(f"{where}: not compiled ({e.get('error')})")
            continue
        out += [f"{where} {u}" for u in scan_unchecked(e["report"])]
        if "ledger" in e:
            out += [f"{where} {u}" for u in ledger.unchecked(e["ledger"])]
    return out
