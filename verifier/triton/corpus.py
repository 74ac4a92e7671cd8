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
>>> access_key("mm@sm80", "a:A", "ttg.local_load", 1, 0)
'mm@sm80 a:A ttg.local_load in loop #0'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.files import BASELINE_BYTES, json_value, read_text
from bankproof.verifier.results import SCHEMA, FrozenMap
from bankproof.verifier.triton import dispatch, ledger
from bankproof.verifier.triton.corpus_configs import builtin_configs
from bankproof.verifier.triton.corpus_records import CorpusEntry
from bankproof.verifier.triton.jobs import compile_config, compile_kernel, load_kernels_file, make_entry  # noqa: F401 - the corpus's API
from bankproof.verifier.triton.results import CorpusResult
from bankproof.verifier.triton.scan import scan_unchecked

ALL_ARCHS = list(target.ARCHS)


def access_key(compile_name: str, label: str, op: str, loop_depth: int, index: int) -> str:
    """The baseline's key of one access: ``config@arch buffer op [in loop] #index``. The buffer is
    named as the source names it, with its dot operand role (:attr:`BufferReport.label`; the SSA
    name only where the TTGIR has no name locations), and ``index`` counts its accesses by the
    same op at the same loop depth: none of it moves when unrelated code changes the TTGIR's SSA
    numbering, and fewer pipeline stages remove prologue accesses without renaming the loop's."""
    where = "" if not loop_depth else " in loop" if loop_depth == 1 else f" in {loop_depth} loops"
    return f"{compile_name} {label} {op}{where} #{index}"


COMPILE_LIMIT_S = 300.0  # per (configuration, arch): a compile past it is reported, not waited for


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
    refused: list | None = None,
) -> list[CorpusEntry]:
    """Compile every (configuration, arch) in parallel workers (each compile at most ``limit_s``
    seconds) and scan each (:func:`make_entry`), on this machine (``engine="local"``) or as Ray
    tasks (``"ray"``, on the cluster at ``address``); with ``results_dir``, results already stored
    there are read instead of computed, and each new one is stored as it arrives (``refused``
    receives the stored entries not trusted, each computed again)."""
    jobs = [(c, a, kernels_file) for a in archs for c in configs if a in c.get("archs", ALL_ARCHS)]
    return dispatch.run(jobs, engine=engine, address=address, workers=workers, limit_s=limit_s,
                        progress=progress, results_dir=results_dir, refused=refused)  # fmt: skip


def flat_accesses(entries: list[CorpusEntry]) -> Mapping[str, int]:
    """``{access key: wavefronts}`` for every analysed access (the baseline's content)."""
    out = {}
    for e in entries:
        labels: dict[str, int] = {}  # a label two buffers share: the second is label#2
        for b in e.report.buffers if e.report else ():
            n = labels[b.label] = labels.get(b.label, 0) + 1
            label = b.label if n == 1 else f"{b.label}#{n}"
            seen: dict[tuple[str, int], int] = {}
            for a in b.accesses:
                depth = a.location.loop_depth or 0
                k = seen[a.op, depth] = seen.get((a.op, depth), -1) + 1
                if a.wavefronts is not None:
                    out[access_key(e.name, label, a.op, depth, k)] = a.wavefronts
    return FrozenMap(out)


def compare(entries: list[CorpusEntry], baseline: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """(accesses that cost more than the baseline, accesses of a compile that ran that the baseline
    has and this run does not: removed, not worse; a pipeline with fewer stages loses buffers)."""
    now = flat_accesses(entries)
    worse = [
        f"{k}: {now[k]} wavefronts, baseline {v}" for k, v in baseline.items() if k in now and now[k] > v
    ]
    ran = {e.name for e in entries}
    gone = [f"{k}: removed (baseline {v} wavefronts)" for k, v in baseline.items()
            if k not in now and k.split(" ", 1)[0] in ran]  # fmt: skip
    return worse, gone


BASELINE_FIELDS = ("schema", "accesses")  # a baseline file's fields (docs/reference/formats/baseline.md)


def load_baseline(path: str) -> Mapping[str, int]:
    """A baseline file's ``{access key: wavefronts}``, checked like any input: a JSON object of
    ``schema`` 1 (optional) and ``accesses``, each a key and a whole number of wavefronts."""
    data = json_value(read_text(path, BASELINE_BYTES, "corpus", "baseline"), "corpus", "baseline")
    if not isinstance(data, dict):
        raise InputError("corpus", "baseline", "must be {'schema': 1, 'accesses': {key: wavefronts}}", path)
    for key in data:
        if key not in BASELINE_FIELDS:
            raise InputError(
                "corpus", f"baseline.{str(key)[:80]}", f"is not a field ({', '.join(BASELINE_FIELDS)})"
            )
    if data.get("schema", 1) != 1 or isinstance(data.get("schema"), bool):
        raise InputError("corpus", "baseline.schema", "must be 1", data.get("schema"))
    acc = data.get("accesses")
    if not isinstance(acc, dict):
        raise InputError("corpus", "baseline.accesses", "must be {key: wavefronts}", path)
    for k, v in acc.items():
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 62:
            raise InputError(
                "corpus", f"baseline.accesses[{k[:120]!r}]", "must be a whole number of wavefronts", v
            )
    return FrozenMap(acc)


CONFIG_FIELDS = {"name": str, "kernel": str, "signature": dict, "constexprs": dict, "num_warps": int,
                 "num_stages": int, "archs": list}  # fmt: skip


def check_config(c: object, i: int) -> None:
    """One configuration of a kernels file, checked before any work: a table with a ``name`` and a
    ``kernel`` (strings), a ``signature`` (argument -> Triton type string), and where given
    ``constexprs`` (a table), ``num_warps`` (1 to 32, a power of two), ``num_stages`` (1 to 16) and
    ``archs`` (archs bankproof knows).

    >>> try:
    ...     check_config({"name": "mm", "kernel": "mm", "signature": {"a": "*fp16"}, "archs": ["sm70"]}, 0)
    ... except ValueError as e:
    ...     print(e)
    triton corpus: CONFIGS[0].archs must be among sm80, sm90, sm100, gfx942, gfx950, got ['sm70']
    """
    where = f"CONFIGS[{i}]"
    if not isinstance(c, dict):
        raise InputError(
            "triton corpus", where, "must be a table (a dict of name, kernel, signature, ...)", c
        )
    for key in c:
        if key not in CONFIG_FIELDS:
            raise InputError(
                "triton corpus", f"{where}.{str(key)[:80]}", f"is not a field ({', '.join(CONFIG_FIELDS)})"
            )
    for key in ("name", "kernel", "signature"):
        if key not in c:
            raise InputError("triton corpus", f"{where}.{key}", "is missing")
    for key, kind in CONFIG_FIELDS.items():
        if key in c and (not isinstance(c[key], kind) or isinstance(c[key], bool)):
            raise InputError("triton corpus", f"{where}.{key}", f"must be a {kind.__name__}", c[key])
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in c["signature"].items()):
        raise InputError("triton corpus", f"{where}.signature", "must map argument names to type strings")
    w = c.get("num_warps", 4)
    if not 1 <= w <= 32 or w & (w - 1):
        raise InputError("triton corpus", f"{where}.num_warps", "must be a power of two from 1 to 32", w)
    if not 1 <= c.get("num_stages", 1) <= 16:
        raise InputError("triton corpus", f"{where}.num_stages", "must be from 1 to 16", c["num_stages"])
    if any(a not in ALL_ARCHS for a in c.get("archs", ())):
        raise InputError(
            "triton corpus", f"{where}.archs", f"must be among {', '.join(ALL_ARCHS)}", c["archs"]
        )


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
    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 4096:
        raise InputError("triton corpus", "workers", "must be 0 (one per CPU) to 4096 processes", workers)
    for a in archs:
        if a not in ALL_ARCHS:
            raise InputError("triton corpus", "arch", f"must be among {', '.join(ALL_ARCHS)}", a)
    if kernels_file:
        mod = load_kernels_file(kernels_file)
        configs = getattr(mod, "CONFIGS", None)
        if not isinstance(configs, list) or not configs:
            raise InputError(
                "triton corpus", "kernels", "must define CONFIGS, a non-empty list", kernels_file
            )
        for i, c in enumerate(configs):
            check_config(c, i)
    else:
        configs = builtin_configs()
    if expand:
        from bankproof.verifier.triton.corpus_generate import expand_configs

        configs = expand_configs(configs, expand, seed)
    base = load_baseline(baseline) if baseline and compare_baseline else None
    refused: list[str] = []
    entries = run_corpus(configs, archs, kernels_file, workers, limit_s, progress, engine, address,
                         results_dir, refused)  # fmt: skip
    worse, removed = compare(entries, base) if base is not None else ([], [])
    gaps, layout_gaps = gap_lines(entries)
    stored = tuple(refused) if results_dir else None
    return CorpusResult(SCHEMA, tuple(entries), tuple(worse), tuple(gaps), tuple(unchecked(entries)), stored,
                        base is not None, tuple(removed), tuple(layout_gaps))  # fmt: skip


def gap_lines(entries: list[CorpusEntry]) -> tuple[list[str], list[str]]:
    """(buffers above their optimum over layouts and instructions, buffers another shared layout
    with the same instructions makes cheaper: what the gate fails on), one line each."""
    buffers = [(e.name, b) for e in entries for b in (e.report.buffers if e.report else ())]
    gaps = [
        f"{n} {b.shown}: {b.wavefronts} wavefronts, optimum {b.optimal_wavefronts}"
        for n, b in buffers
        if b.gap
    ]
    layout = [f"{n} {b.shown}: {b.wavefronts} wavefronts, {b.wavefronts - b.layout_gap} with another layout"
              for n, b in buffers if b.layout_gap]  # fmt: skip
    return gaps, layout


def unchecked(entries: list[CorpusEntry]) -> list[str]:
    """What the corpus could not check: configurations that did not compile, accesses not
    analysed, buffers whose optimum is unknown (a gate must not pass on them silently)."""
    out = []
    for e in entries:
        if e.report is None:
            out.append(f"{e.name}: not compiled ({e.error})")
            continue
        out += [f"{e.name} {u}" for u in scan_unchecked(e.report)]
        if e.ledger is not None:
            out += [f"{e.name} {u}" for u in ledger.unchecked(e.ledger)]
    return out
