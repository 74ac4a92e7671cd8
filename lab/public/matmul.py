"""Matmul variants of the kinds Triton's tutorials and quantization/kernel libraries ship
(tutorial matmul with a fused activation, fp8 and int8 GEMMs, block-scaled fp8 as in serving
engines' W8A8 kernels, int4 weight-only dequantizing GEMMs as in torchao/GemLite-style kernels,
split-K with atomics, batched matmul, tf32, TMA device descriptors, warp-specialized persistent
TMA, and the tutorial's grouped GEMM over a loaded problem list). This project's own code after
those algorithms, not copies."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def matmul_act(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               ACT: tl.constexpr):
    """The tutorial's matmul with a fused epilogue activation (1: leaky ReLU, 2: GELU)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    if ACT == 1:
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    if ACT == 2:
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_nt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A B^T with B stored N x K (a linear layer's weight), any dtype the pointers give."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32 if a_ptr.dtype.element_ty != tl.int8 else tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        bt = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        acc += tl.dot(a, bt)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_block_scaled_fp8(a_ptr, b_ptr, c_ptr, as_ptr, bs_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                            BK: tl.constexpr, GROUP_N: tl.constexpr):
    """W8A8 with per-(row, K block) activation scales and per-(N group, K block) weight scales."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :])
        bt = tl.load(b_ptr + rn[None, :] * K + (k * BK + rk)[:, None])
        sa = tl.load(as_ptr + rm * tl.cdiv(K, BK) + k)
        sb = tl.load(bs_ptr + (rn // GROUP_N) * tl.cdiv(K, BK) + k)
        acc += tl.dot(a, bt) * sa[:, None] * sb[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_w4a16(a_ptr, q_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 GROUP: tl.constexpr):
    """Weight-only int4: eight 4-bit weights packed per int32 along K, a scale per (group, column)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    shift = (rk % 8) * 4
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        packed = tl.load(q_ptr + ((k + rk) // 8)[:, None] * N + rn[None, :])
        w = ((packed >> shift[:, None]) & 0xF).to(tl.float16) - 8.0
        s = tl.load(s_ptr + (k // GROUP) * N + rn)
        acc += tl.dot(a, (w * s[None, :]).to(tl.float16))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_split_k_atomic(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          SPLIT: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    pk = tl.program_id(2)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(pk * BK, K, BK * SPLIT):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def bmm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    z = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptr += z * M * K
    b_ptr += z * K * N
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                      tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c_ptr + z * M * N + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Device-side TMA descriptors, B stored N x K (the tutorial's descriptor matmul)."""
    a_d = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_d = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_d = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_d.load([om, k]), b_d.load([on, k]).T, acc)
    c_d.store([om, on], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_desc_persistent_ws(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                              BK: tl.constexpr, SUB: tl.constexpr):
    """Persistent, warp-specialized, with the epilogue stored in ``SUB`` column slices."""
    a_d = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_d = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_d = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN // SUB])
    n_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * n_n
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True, warp_specialize=True):
        om = (tile // n_n) * BM
        on = (tile % n_n) * BN
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_d.load([om, k]), b_d.load([on, k]).T, acc)
        if SUB == 2:
            acc = tl.reshape(acc, (BM, 2, BN // 2)).permute(0, 2, 1)
            lo, hi = tl.split(acc)
            c_d.store([om, on], lo.to(c_ptr.dtype.element_ty))
            c_d.store([om, on + BN // 2], hi.to(c_ptr.dtype.element_ty))
        else:
            c_d.store([om, on], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def grouped_gemm(sizes_ptr, a_ptrs, b_ptrs, c_ptrs, groups, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    """The tutorial's grouped GEMM: problem sizes and pointers loaded per group, tiles strided
    over the programs."""
    tile = tl.program_id(0)
    last = 0
    for g in range(groups):
        m = tl.load(sizes_ptr + g * 3)
        n = tl.load(sizes_ptr + g * 3 + 1)
        k = tl.load(sizes_ptr + g * 3 + 2)
        n_tiles = tl.cdiv(m, BM) * tl.cdiv(n, BN)
        while tile >= last and tile < last + n_tiles:
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
            t = tile - last
            rm = (t // tl.cdiv(n, BN)) * BM + tl.arange(0, BM)
            rn = (t % tl.cdiv(n, BN)) * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), tl.float32)
            for kk in range(0, tl.cdiv(k, BK)):
                acc += tl.dot(tl.load(a + rm[:, None] * k + (kk * BK + rk)[None, :]),
                              tl.load(b + (kk * BK + rk)[:, None] * n + rn[None, :]))
            tl.store(c + rm[:, None] * n + rn[None, :], acc.to(tl.float16))
            tile += tl.num_programs(0)
        last += n_tiles


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None, fills=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {}), **({"fills": fills} if fills else {})}


def _mm(a="*fp16", b=None, c=None, **extra):
    return {"a_ptr": a, "b_ptr": b or a, "c_ptr": c or a, "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr",
            "BN": "constexpr", "BK": "constexpr", **extra}  # fmt: skip


_E8 = "*fp8e4nv"
CONFIGS = [
    _c("lib_matmul_leaky_fp16_128x256x64_w8", "matmul_act", _mm(ACT="constexpr"),
       {"BM": 128, "BN": 256, "BK": 64, "ACT": 1}, warps=8),
    _c("lib_matmul_gelu_bf16_64x128x32", "matmul_act", _mm("*bf16", ACT="constexpr"),
       {"BM": 64, "BN": 128, "BK": 32, "ACT": 2}, stages=4),
    _c("lib_matmul_fp32_tf32_64x64x32", "matmul_act", _mm("*fp32", ACT="constexpr"),
       {"BM": 64, "BN": 64, "BK": 32, "ACT": 0}),
    _c("lib_matmul_nt_fp16_128x128x64_w8", "matmul_nt", _mm(), {"BM": 128, "BN": 128, "BK": 64}, warps=8),
    _c("lib_matmul_nt_fp8_128x128x128_w8", "matmul_nt", _mm(_E8, c="*fp16"), {"BM": 128, "BN": 128, "BK": 128},
       warps=8),
    _c("lib_matmul_nt_int8_128x64x64", "matmul_nt", _mm("*i8", c="*i32"), {"BM": 128, "BN": 64, "BK": 64}),
    _c("lib_matmul_block_fp8_64x128x128", "matmul_block_scaled_fp8", {"a_ptr": _E8, "b_ptr": _E8,
       "c_ptr": "*bf16", "as_ptr": "*fp32", "bs_ptr": "*fp32", **_mm(GROUP_N="constexpr")}, {"BM": 64, "BN": 128, "BK": 128, "GROUP_N": 128}),
    _c("lib_matmul_w4a16_64x64x64_g64", "matmul_w4a16", {"a_ptr": "*fp16", "q_ptr": "*i32", "s_ptr": "*fp16",
       "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr",
       "BK": "constexpr", "GROUP": "constexpr"}, {"BM": 64, "BN": 64, "BK": 64, "GROUP": 64}),
    _c("lib_matmul_w4a16_16x128x128_g128", "matmul_w4a16", {"a_ptr": "*fp16", "q_ptr": "*i32", "s_ptr": "*fp16",
       "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr",
       "BK": "constexpr", "GROUP": "constexpr"}, {"BM": 16, "BN": 128, "BK": 128, "GROUP": 128}),
    _c("lib_matmul_split_k_fp16_64x64x64_s4", "matmul_split_k_atomic", _mm(c="*fp32", SPLIT="constexpr"),
       {"BM": 64, "BN": 64, "BK": 64, "SPLIT": 4}, launch={"K": 1024}),
    _c("lib_bmm_bf16_64x64x32", "bmm", _mm("*bf16"), {"BM": 64, "BN": 64, "BK": 32}),
    _c("lib_matmul_desc_fp16_128x128x64_w8", "matmul_desc", _mm(), {"BM": 128, "BN": 128, "BK": 64}, warps=8),
    _c("lib_matmul_desc_bf16_64x128x64", "matmul_desc", _mm("*bf16"), {"BM": 64, "BN": 128, "BK": 64}),
    _c("lib_matmul_desc_ws_fp16_128x128x64_sub2", "matmul_desc_persistent_ws", _mm(SUB="constexpr"),
       {"BM": 128, "BN": 128, "BK": 64, "SUB": 2}, warps=4, stages=4),
    _c("lib_grouped_gemm_fp16_64x64x32", "grouped_gemm", {"sizes_ptr": "*i32", "a_ptrs": "*i64", "b_ptrs": "*i64",
       "c_ptrs": "*i64", "groups": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
       {"BM": 64, "BN": 64, "BK": 32}, launch={"groups": 1}),
]  # fmt: skip
