"""Triton matmul kernels whose operands reach wgmma (sm90) / tcgen05.mma (sm100) through
``nvmma_shared`` buffers: pointer loads (local_alloc) and TMA descriptor loads, every operand dtype
Triton lowers to an MMA from shared memory, K tiles that select each swizzle width, and B given
N-contiguous (MN-major) or K-contiguous (a transposed view, K-major)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def mm_ptr(
    a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, B_KMAJOR: tl.constexpr
):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if B_KMAJOR:
            b = tl.trans(tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :]))
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def mm_tma(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[BM, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[BN, K], strides=[K, 1], block_shape=[BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(a_desc.load([0, k]), b_desc.load([0, k]).T)
    tl.store(c_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


# (kernel, element type, BM, BN, BK, B K-major) — BK * element bytes picks the swizzle width
CONFIGS = [
    ("mm_ptr", "fp16", 128, 128, 64, False),
    ("mm_ptr", "fp16", 64, 64, 32, False),
    ("mm_ptr", "bf16", 64, 128, 16, True),
    ("mm_ptr", "fp16", 128, 64, 64, True),
    ("mm_ptr", "fp8e4nv", 128, 128, 128, True),
    ("mm_ptr", "fp8e4nv", 64, 64, 64, True),
    ("mm_ptr", "fp32", 64, 64, 32, True),
    ("mm_ptr", "fp32", 64, 64, 16, False),
    ("mm_tma", "fp16", 128, 128, 64, True),
    ("mm_tma", "bf16", 64, 128, 32, True),
    ("mm_tma", "fp8e4nv", 128, 64, 128, True),
]


def compile_config(config: tuple, arch: int) -> tuple[str, str]:
    """(TTGIR, PTX) of one configuration, compiled by Triton for ``cuda:arch`` on the CPU."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name, ty, bm, bn, bk, b_kmajor = config
    fn = {"mm_ptr": mm_ptr, "mm_tma": mm_tma}[name]
    sig = {"a_ptr": f"*{ty}", "b_ptr": f"*{ty}", "c_ptr": "*fp32", "K": "i32"}
    consts = {"BM": bm, "BN": bn, "BK": bk} | ({"B_KMAJOR": b_kmajor} if name == "mm_ptr" else {})
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts), target=GPUTarget("cuda", arch, 32))
    return k.asm["ttgir"], k.asm["ptx"]
