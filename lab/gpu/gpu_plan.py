"""Plan whole-kernel GPU runs of the built-in Triton corpus (``lab/gpu/triton_kernels.py``
launches them on the device): compile each configuration here with Triton 3.9.0, write its cubin
and ``plan.json`` with the PTX ``.entry`` parameters (pointers get a zeroed buffer; integer
arguments a value that runs every loop fully; the scratch pointers Triton appends get buffers of
the sizes its metadata asks for), dynamic shared memory, threads, and the ledger's totals for
those argument values.

Usage: ``python -m lab.gpu.gpu_plan DIR [ARCH [KERNELS.py ...]]``. A configuration's ``launch``
overrides argument values; its ``fills`` give an int32 value a pointer's buffer is filled with.

>>> launch_args({"M": "i32", "K": "i32", "BM": "constexpr"}, {"BM": 64, "BK": 32})
{'M': 64, 'K': 128}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

STAGES = 4  # loops over K (or a sequence) run this many full iterations
BUFFER_BYTES = 8 << 20


def launch_args(signature: dict[str, str], constexprs: dict[str, int]) -> dict[str, int]:
    """Values for a configuration's integer arguments: one tile for ``M``/``N`` (one CTA covers
    it), ``STAGES`` tiles of ``BK`` (or ``BN``) for the reduction extent ``K``/``L``."""
    out = {}
    for name, t in signature.items():
        if t.startswith("*") or t == "constexpr":
            continue
        if name in ("M", "N"):
            out[name] = constexprs.get(f"B{name}", 64)
        elif name == "K":
            out[name] = STAGES * constexprs.get("BK", 32)
        elif name == "L":
            out[name] = STAGES * constexprs.get("BN", 64)
        else:
            out[name] = 64
    return out


def prepare(out_dir: str, arch: str = "sm90", *kernels_files: str, only: set[str] | None = None) -> None:
    """Compile the built-in corpus (or each kernels file's ``CONFIGS``) for ``arch`` and write the
    cubins and ``plan.json`` (``only``: just the configurations of those names)."""
    import triton
    from bankproof.models.target import ARCHS
    from bankproof.verifier.ptx import parse_kernel
    from bankproof.verifier.results import plain
    from bankproof.verifier.triton import corpus, ledger
    from bankproof.verifier.triton.scan import scan_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    jobs = (
        [(c, None) for c in corpus.builtin_configs()]
        if not kernels_files
        else [(c, f) for f in kernels_files for c in corpus.load_kernels_file(f).CONFIGS]
    )
    for config, kernels_file in jobs:
        if arch not in config.get("archs", ARCHS) or (only and config["name"] not in only):
            continue
        sig = config["signature"]
        try:
            k = corpus.compile_config(config, arch, kernels_file)
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            print(f"skip {config['name']}: {type(e).__name__}", file=sys.stderr)
            continue
        ptx, ttgir = k.asm["ptx"], k.asm["ttgir"]
        args = {**launch_args(sig, config.get("constexprs", {})), **config.get("launch", {})}
        fills = config.get("fills", {})
        kernel = parse_kernel(ptx)
        names = [n for n, t in sig.items() if t != "constexpr"]
        params = []
        for i, (ptype, _) in enumerate(kernel.params):
            if i < len(names):
                n = names[i]
                params.append({"name": n, "type": ptype, "value": args.get(n)} if n in args else
                              {"name": n, "type": ptype, "buffer": BUFFER_BYTES, "fill": fills.get(n, 0)})  # fmt: skip
            else:  # Triton's global and profile scratch pointers
                scratch = [
                    getattr(k.metadata, "global_scratch_size", 0),
                    getattr(k.metadata, "profile_scratch_size", 0),
                ]
                size = scratch[i - len(names)] if i - len(names) < 2 else 0
                params.append(
                    {"name": f"scratch{i - len(names)}", "type": ptype, "buffer": max(int(size or 0), 0)}
                )
        (out / f"{config['name']}.cubin").write_bytes(k.asm["cubin"])
        led = ledger.build(scan_text(ttgir), ttgir, ptx, args)
        plan.append({
            "name": config["name"], "file": kernels_file, "kernel": kernel.name, "cubin": f"{config['name']}.cubin",
            "threads": kernel.threads, "shared": int(k.metadata.shared), "params": params, "args": args,
            "ledger_totals": plain(led.totals), "unattributed": list(led.unattributed),
        })  # fmt: skip
    (out / "plan.json").write_text(
        json.dumps({"arch": arch, "triton": triton.__version__, "kernels": plan}, indent=1)
    )
    print(f"{len(plan)} kernels -> {out}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m lab.gpu.gpu_plan DIR [ARCH] [KERNELS_FILE ...] [--only NAME,NAME]")
    argv = sys.argv[1:]
    names = set(argv.pop(argv.index("--only") + 1).split(",")) if "--only" in argv else None
    if names:
        argv.remove("--only")
    prepare(argv[0], argv[1] if len(argv) > 1 else "sm90", *argv[2:], only=names)
