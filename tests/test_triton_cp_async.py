"""Which cp.async Triton 3.9.0 emits, read from its own PTX (compiled on the CPU): 16-byte copies
are ``cp.async.cg`` (LDGSTS.BYPASS, whose shared wavefronts Nsight Compute does not count) and
narrower ones ``cp.async.ca`` (measured: they cost their store when coalesced). This is what
``bankproof triton scan`` marks ``assumed`` / ``measured``."""

from __future__ import annotations

import os
import re

import pytest

from verifier.triton import corpus

triton = pytest.importorskip("triton")


def _cp_async_kinds(name: str) -> set[tuple[str, int]]:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from verifier.triton import corpus_kernels

    config = next(c for c in corpus.builtin_configs() if c["name"] == name)
    sig = config["signature"]
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t != "constexpr"}
    src = ASTSource(fn=getattr(corpus_kernels, config["kernel"]), signature=sig,
                    constexprs=config.get("constexprs", {}), attrs=attrs)  # fmt: skip
    opts = {"num_warps": config["num_warps"], "num_stages": config["num_stages"]}
    ptx = triton.compile(src, target=GPUTarget("cuda", 80, 32), options=opts).asm["ptx"]
    return {
        (mode, int(size, 16))
        for mode, size in re.findall(r"cp\.async\.(c[ag])\.shared\.global.*?, (0x\w+)", ptx)
    }


def test_sixteen_byte_copies_bypass_narrow_ones_cache():
    assert _cp_async_kinds("matmul_fp16_64x64x32_w2_s3") == {("cg", 16)}
    assert ("ca", 8) in _cp_async_kinds("matmul_mixed_f16xi8_64x64x64")
