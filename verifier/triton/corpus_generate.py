"""Expand corpus configurations into many: each configuration's power-of-two ``constexpr`` sizes
(tile sizes such as ``BM``/``BN``/``BK`` or ``BLOCK_*``, and other sizes) halved or doubled within
[16, 256], ``num_warps`` in {2, 4, 8}, ``num_stages`` in {2, 3, 4}, and 16-bit float pointers
swapped between fp16 and bf16. The originals come first; the variants follow in an order fixed by
the seed; names say what changed (``matmul~BM=64,w8``). Some variants do not compile (a shape Triton
refuses): the corpus reports them as not compiled.

>>> c = {"name": "k", "kernel": "k", "signature": {"a": "*fp16", "BM": "constexpr"},
...      "constexprs": {"BM": 64}, "num_warps": 4, "num_stages": 3}
>>> [x["name"] for x in expand_configs([c], 4, seed=1)]
['k', 'k~BM=32,w2', 'k~BM=128,w2,bf16', 'k~BM=32,s4,bf16']
"""

from __future__ import annotations

import itertools
import random

from bankproof.models.errors import InputError

WARPS = (2, 4, 8)
STAGES = (2, 3, 4)
SWAP = {"*fp16": "*bf16", "*bf16": "*fp16"}


def _sizes(v: object) -> tuple[int, ...]:
    if not isinstance(v, int) or isinstance(v, bool) or v < 16 or v & (v - 1):
        return (v,)  # type: ignore[return-value]
    return tuple(x for x in (v // 2, v, v * 2) if 16 <= x <= 256) or (v,)


def variants(config: dict) -> list[dict]:
    """Every variant of one configuration (the original included, first)."""
    consts = config.get("constexprs", {})
    names = list(consts)
    choices = [_sizes(consts[n]) for n in names]
    floats = any(t in SWAP for t in config["signature"].values())
    out = []
    for sizes in itertools.product(*choices):
        for w in WARPS:
            for s in STAGES:
                for swap in (False, True) if floats else (False,):
                    changed = [f"{n}={v}" for n, v in zip(names, sizes, strict=True) if v != consts[n]]
                    changed += [f"w{w}"] * (w != config.get("num_warps", 4))
                    changed += [f"s{s}"] * (s != config.get("num_stages", 3))
                    changed += [("bf16" if "*fp16" in config["signature"].values() else "fp16")] * swap
                    sig = {k: SWAP.get(t, t) if swap else t for k, t in config["signature"].items()}
                    name = config["name"] + (f"~{','.join(changed)}" if changed else "")
                    const = dict(zip(names, sizes, strict=True))
                    out.append({**config, "name": name, "signature": sig, "constexprs": const, "num_warps": w,
                                "num_stages": s})  # fmt: skip
    out.sort(key=lambda c: c["name"] != config["name"])
    return out


def expand_configs(configs: list[dict], n: int, seed: int = 0) -> list[dict]:
    """Up to ``n`` configurations: the originals, then their variants in a seeded order (each name
    once)."""
    if not isinstance(n, int) or n < 1:
        raise InputError("triton corpus", "--expand", "must be a positive number of configurations", n)
    rng = random.Random(seed)
    seen = {c["name"] for c in configs}
    out = list(configs[:n])
    rest = [v for c in configs for v in variants(c)[1:] if v["name"] not in seen]
    rng.shuffle(rest)
    for v in rest:
        if len(out) >= n:
            break
        if v["name"] not in seen:
            seen.add(v["name"])
            out.append(v)
    return out


__all__ = ["expand_configs", "variants"]
