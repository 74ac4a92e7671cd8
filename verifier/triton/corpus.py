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
from collections.abc import Callable
from pathlib import Path

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.verifier.triton import ledger, lowering
from bankproof.verifier.triton.compile_pool import run_jobs
from bankproof.verifier.triton.results import CorpusResult
from bankproof.verifier.triton.scan import scan_text, scan_unchecked

ALL_ARCHS = list(target.ARCHS)
PTR = {"fp16": "*fp16", "bf16": "*bf16", "fp32": "*fp32", "fp8": "*fp8e4nv", "i8": "*i8"}


def _mm(name, dtype, bm, bn, bk, warps, stages, kernel="matmul", b_dtype=None, out=None):
    a = PTR[dtype]
    sig = {
        "a_ptr": a,
        "b_ptr": PTR[b_dtype or dtype],
        "c_ptr": PTR[out or ("fp16" if dtype == "fp8" else dtype)],
    }
    sig.update({"M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"})
    config = {
        "name": name,
        "kernel": kernel,
        "signature": sig,
        "constexprs": {"BM": bm, "BN": bn, "BK": bk},
        "num_warps": warps,
        "num_stages": stages,
    }
    if "fp8" in (dtype, b_dtype):  # fp8 tensor-core dots need sm89 or newer
        config["archs"] = ["sm90", "sm100"]
    return config


def builtin_configs() -> list[dict]:
    """>= 40 configurations: matmuls (pointer and TMA-descriptor), transposes, attention, layer
    norm, softmax, a reduction, gather/scatter and a mixed-precision matmul."""
    out = []
    for dtype in ("fp16", "bf16", "fp32", "fp8"):
        for bm, bn, bk, warps, stages in (
            (128, 128, 32, 4, 3),
            (128, 64, 64, 4, 2),
            (64, 64, 32, 2, 3),
            (64, 128, 64, 4, 4),
            (128, 256, 64, 8, 3),
            (32, 32, 32, 1, 2),
        ):
            out.append(
                _mm(f"matmul_{dtype}_{bm}x{bn}x{bk}_w{warps}_s{stages}", dtype, bm, bn, bk, warps, stages)
            )
    for bm, bn, bk, warps in ((128, 128, 32, 4), (64, 64, 64, 4)):
        out.append(
            _mm(
                f"matmul_mixed_f16xi8_{bm}x{bn}x{bk}",
                "fp16",
                bm,
                bn,
                bk,
                warps,
                3,
                "matmul_mixed",
                "i8",
                "fp16",
            )
        )
    for dtype in ("fp32", "fp16", "i8"):
        for b, warps in ((32, 1), (64, 4), (128, 8)):
            out.append(
                {
                    "name": f"transpose_{dtype}_{b}_w{warps}",
                    "kernel": "transpose",
                    "signature": {"x_ptr": PTR[dtype], "y_ptr": PTR[dtype], "B": "constexpr"},
                    "constexprs": {"B": b},
                    "num_warps": warps,
                    "num_stages": 1,
                }
            )
    for bm, bn, d, warps in ((64, 64, 64, 4), (128, 64, 64, 8), (128, 128, 128, 8)):
        sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "L": "i32"}
        out.append(
            {
                "name": f"attention_fwd_{bm}x{bn}_d{d}_w{warps}",
                "kernel": "attention_fwd",
                "signature": {**sig, "BM": "constexpr", "BN": "constexpr", "D": "constexpr"},
                "constexprs": {"BM": bm, "BN": bn, "D": d},
                "num_warps": warps,
                "num_stages": 2,
            }
        )
    for kernel in ("layer_norm", "softmax"):
        for dtype, n, r, warps in (("fp16", 1024, 4, 4), ("fp32", 256, 16, 4)):
            sig = {"x_ptr": PTR[dtype], "y_ptr": PTR[dtype]}
            if kernel == "layer_norm":
                sig["w_ptr"] = "*fp32"
            out.append(
                {
                    "name": f"{kernel}_{dtype}_{r}x{n}_w{warps}",
                    "kernel": kernel,
                    "signature": {**sig, "N": "constexpr", "R": "constexpr"},
                    "constexprs": {"N": n, "R": r},
                    "num_warps": warps,
                    "num_stages": 1,
                }
            )
    for m, n, warps in ((64, 128, 4), (256, 64, 8)):
        out.append(
            {
                "name": f"column_sum_fp32_{m}x{n}_w{warps}",
                "kernel": "column_sum",
                "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "constexpr", "N": "constexpr"},
                "constexprs": {"M": m, "N": n},
                "num_warps": warps,
                "num_stages": 1,
            }
        )
    out.append(_mm("matmul_fp16_256x128x32_w8_s4", "fp16", 256, 128, 32, 8, 4))
    out.append(_mm("matmul_bf16_64x256x32_w8_s3", "bf16", 64, 256, 32, 8, 3))
    for kernel in ("layer_norm", "softmax"):
        sig = {"x_ptr": "*bf16", "y_ptr": "*bf16", **({"w_ptr": "*fp32"} if kernel == "layer_norm" else {})}
        out.append(
            {
                "name": f"{kernel}_bf16_8x512_w8",
                "kernel": kernel,
                "signature": {**sig, "N": "constexpr", "R": "constexpr"},
                "constexprs": {"N": 512, "R": 8},
                "num_warps": 8,
                "num_stages": 1,
            }
        )
    out.append(
        {
            "name": "gather_scatter_fp16_64x64_w4",
            "kernel": "gather_scatter",
            "signature": {
                "x_ptr": "*fp16",
                "idx_ptr": "*i32",
                "y_ptr": "*fp16",
                "M": "constexpr",
                "N": "constexpr",
            },
            "constexprs": {"M": 64, "N": 64},
            "num_warps": 4,
            "num_stages": 1,
        }
    )
    # TMA-descriptor matmuls (sm90/sm100): TMA fills the operand tiles, the epilogue tile goes
    # through shared memory to the TMA store (stmatrix on sm90).
    for dtype, bm, bn, bk, warps in (
        ("fp16", 128, 128, 64, 4),
        ("fp16", 64, 64, 32, 4),
        ("fp16", 128, 256, 64, 8),
        ("bf16", 128, 128, 64, 4),
        ("fp8", 128, 128, 128, 4),
    ):
        config = _mm(f"matmul_tma_{dtype}_{bm}x{bn}x{bk}_w{warps}", dtype, bm, bn, bk, warps, 3, "matmul_tma")
        config["archs"] = ["sm90", "sm100"]
        out.append(config)
    return out + _today()


def _one(
    name: str, kernel: str, sig: dict, constexprs: dict, warps: int, stages: int = 1, archs=None
) -> dict:
    config = {"name": name, "kernel": kernel, "signature": {**sig, **dict.fromkeys(constexprs, "constexpr")},
              "constexprs": constexprs, "num_warps": warps, "num_stages": stages}  # fmt: skip
    if archs:
        config["archs"] = archs
    return config


def _today() -> list[dict]:
    """Kernels written the way Hopper/Blackwell code is written now: scans, histograms, gathers,
    sorts, cross-warp reductions, cross-entropy, split-K, a persistent warp-specialized TMA
    matmul and attention through tensor descriptors."""
    xy = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    out = [
        _one("cumsum_fp32_4096_w8", "cumsum", xy, {"N": 4096}, 8),
        _one("cumsum_fp32_1024_w4", "cumsum", xy, {"N": 1024}, 4),
        _one("histogram_i32_4096_64_w4", "histogram", {"x_ptr": "*i32", "y_ptr": "*i32"},
             {"N": 4096, "BINS": 64}, 4),
        _one("gather_rows_fp32_64x64_w4", "gather_rows", {"x_ptr": "*fp32", "idx_ptr": "*i32",
             "y_ptr": "*fp32"}, {"M": 64, "N": 64}, 4),
        _one("sort_rows_fp32_16x128_w4", "sort_rows", xy, {"M": 16, "N": 128}, 4),
        _one("column_max_fp32_64x256_w8", "column_max", xy, {"M": 64, "N": 256}, 8),
        _one("column_max_fp16_128x64_w4", "column_max", {"x_ptr": "*fp16", "y_ptr": "*fp16"},
             {"M": 128, "N": 64}, 4),
    ]  # fmt: skip
    ce = {"logits_ptr": "*fp16", "target_ptr": "*i32", "loss_ptr": "*fp32"}
    out += [
        _one("cross_entropy_fp16_4x2048_w4", "cross_entropy", ce, {"N": 2048, "R": 4}, 4),
        _one("cross_entropy_fp16_16x512_w8", "cross_entropy", ce, {"N": 512, "R": 16}, 8),
    ]
    mm = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    out += [
        _one(
            "matmul_split_k_fp16_128x128x32_w4", "matmul_split_k", mm, {"BM": 128, "BN": 128, "BK": 32}, 4, 3
        ),
        _one("matmul_split_k_fp16_64x64x64_w4", "matmul_split_k", mm, {"BM": 64, "BN": 64, "BK": 64}, 4, 3),
    ]
    att = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "L": "i32"}
    for bm, bn, d, warps in ((128, 64, 64, 4), (128, 128, 128, 8)):
        out.append(_one(f"attention_fwd_tma_{bm}x{bn}_d{d}_w{warps}", "attention_fwd_tma", att,
                        {"BM": bm, "BN": bn, "D": d}, warps, 2, ["sm90", "sm100"]))  # fmt: skip
    mm16 = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    out += [
        _one(f"matmul_tma_persistent_ws_fp16_{bm}x{bn}x{bk}_w{warps}", "matmul_tma_persistent_ws", mm16,
             {"BM": bm, "BN": bn, "BK": bk}, warps, 3, ["sm90", "sm100"])
        for bm, bn, bk, warps in ((128, 128, 64, 4), (128, 256, 64, 8))
    ]  # fmt: skip
    out.append(_one("topk_fp32_16x256_k8_w4", "topk_rows", xy, {"M": 16, "N": 256, "K": 8}, 4))
    mx = {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8",
          "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}  # fmt: skip
    out.append(_one("matmul_mxfp8_128x128x128_w4", "matmul_mxfp8", mx, {"BM": 128, "BN": 128, "BK": 128},
                    4, 3, ["sm90", "sm100"]))  # fmt: skip
    return out


def _kernel(name: str, kernels_file: str | None):
    if kernels_file:
        mod = _load_file(kernels_file)
    else:
        from bankproof.verifier.triton import corpus_kernels as mod
    if not hasattr(mod, name):
        raise InputError("corpus", "kernel", "is not defined in the kernels module", name)
    return getattr(mod, name)


def _load_file(path: str):
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


def run_corpus(
    configs: list[dict],
    archs: list[str],
    kernels_file: str | None = None,
    workers: int = 0,
    limit_s: float = COMPILE_LIMIT_S,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Compile every (configuration, arch) in parallel workers (each compile at most ``limit_s``
    seconds), scan each TTGIR, and compare the scan's instructions with the PTX Triton emitted
    (``lowering``: the disagreements)."""
    jobs = [(c, a, kernels_file) for a in archs for c in configs if a in c.get("archs", ALL_ARCHS)]
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    results = run_jobs(
        jobs,
        "bankproof.verifier.triton.corpus._job",
        workers,
        limit_s,
        on_lost=lambda job, why: (job[0]["name"], job[1], None, f"compile {why}"),
        progress=progress,
    )
    out = []
    for name, arch, compiled, error in results:
        entry = {"config": name, "arch": arch}
        if error or compiled is None:
            entry["error"] = error
        else:
            ttgir, ptx = compiled
            entry["report"] = scan_text(ttgir, f"{name}@{arch}.ttgir")
            entry["ttgir"] = ttgir
            if "ledger" not in target.get(arch).commands:  # the ledger reads PTX only so far
                entry["ptx_counts"], entry["cp_async_modes"], entry["lowering"] = {}, {}, []
                note = target.get(arch).not_modeled("ledger")
                entry["ledger"] = {"entries": [], "unattributed": [], "disagreements": [], "note": note}
                out.append(entry)
                continue
            entry["ptx_counts"] = lowering.ptx_counts(ptx)
            entry["cp_async_modes"] = lowering.ptx_cp_async_modes(ptx)
            try:
                led = ledger.build(entry["report"], ttgir, ptx)
            except (InputError, ValueError, KeyError, IndexError) as e:  # PTX the reader cannot read
                led = {
                    "entries": [],
                    "unattributed": [f"the PTX could not be read: {e}"],
                    "disagreements": [],
                }
            entry["ledger"] = led
            # the whole-kernel check: every PTX shared-memory instruction owned, counted alike
            entry["lowering"] = led["disagreements"] + [f"unattributed: {u}" for u in led["unattributed"]]
        out.append(entry)
    return out


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
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError("corpus", "baseline", f"cannot be read ({type(e).__name__})", path) from None
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
    base = load_baseline(baseline) if baseline and compare_baseline else None
    entries = run_corpus(configs, archs, kernels_file, workers, limit_s, progress)
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
