"""Mixture-of-experts and quantization kernels of the kinds serving engines ship (vLLM/SGLang's
fused MoE GEMM over sorted token ids with an early exit past the padded token count, expert
counting with atomics, top-k routing softmax; per-token-group fp8 quantization, SiLU-and-mul with
quantization, 2-D block fp8 quantization, int8 row-wise dequantization). This project's own code
after those algorithms, not copies."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def fused_moe(a_ptr, b_ptr, c_ptr, topk_w_ptr, sorted_ids_ptr, expert_ids_ptr, n_post_pad_ptr, N, K, n_valid,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, TOPK: tl.constexpr, ROUTED: tl.constexpr):
    """One block of sorted token slots times its expert's weight (N x K); slots past the padded
    count (loaded) return at once; padding slots are masked."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BM >= tl.load(n_post_pad_ptr):
        return
    slots = pid_m * BM + tl.arange(0, BM)
    tok = tl.load(sorted_ids_ptr + slots)
    valid = tok < n_valid
    e = tl.load(expert_ids_ptr + pid_m)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + (tok // TOPK)[:, None] * K + kk[None, :], mask=valid[:, None] & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + e * N * K + rn[None, :] * K + kk[:, None], mask=kk[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    if ROUTED:
        acc *= tl.load(topk_w_ptr + tok, mask=valid, other=0.0)[:, None]
    tl.store(c_ptr + tok[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=valid[:, None] & (rn[None, :] < N))


@triton.jit
def expert_count(topk_ids_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    e = tl.load(topk_ids_ptr + i, mask=i < n, other=0)
    tl.atomic_add(counts_ptr + e, 1, mask=i < n)


@triton.jit
def topk_softmax(logits_ptr, w_ptr, ids_ptr, E: tl.constexpr, T: tl.constexpr, TOPK: tl.constexpr):
    """Routing: softmax over experts per token, then ``TOPK`` rounds of argmax-and-mask."""
    t = tl.program_id(0) * T + tl.arange(0, T)
    e = tl.arange(0, E)
    x = tl.load(logits_ptr + t[:, None] * E + e[None, :]).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    for j in tl.static_range(TOPK):
        best = tl.argmax(p, axis=1)
        tl.store(w_ptr + t * TOPK + j, tl.max(p, axis=1))
        tl.store(ids_ptr + t * TOPK + j, best)
        p = tl.where(e[None, :] == best[:, None], -1.0, p)


@triton.jit
def per_token_group_quant_fp8(x_ptr, q_ptr, s_ptr, GROUP: tl.constexpr, GROUPS_PER: tl.constexpr):
    """Absmax scales per group of ``GROUP`` columns, ``GROUPS_PER`` groups per program as a 2-D block."""
    g = tl.program_id(0) * GROUPS_PER + tl.arange(0, GROUPS_PER)
    c = tl.arange(0, GROUP)
    x = tl.load(x_ptr + g[:, None] * GROUP + c[None, :]).to(tl.float32)
    s = tl.maximum(tl.max(tl.abs(x), axis=1), 1e-10) / 448.0
    tl.store(q_ptr + g[:, None] * GROUP + c[None, :], (x / s[:, None]).to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + g, s)


@triton.jit
def silu_mul_quant_fp8(x_ptr, q_ptr, s_ptr, D: tl.constexpr, GROUP: tl.constexpr):
    """``silu(gate) * up`` over a row of 2*D, quantized to fp8 with a scale per group."""
    row = tl.program_id(0)
    c = tl.arange(0, D)
    gate = tl.load(x_ptr + row * 2 * D + c).to(tl.float32)
    up = tl.load(x_ptr + row * 2 * D + D + c).to(tl.float32)
    y = tl.reshape(gate * tl.sigmoid(gate) * up, (D // GROUP, GROUP))
    s = tl.maximum(tl.max(tl.abs(y), axis=1), 1e-10) / 448.0
    q = tl.reshape(y / s[:, None], (D,))
    tl.store(q_ptr + row * D + c, q.to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + row * (D // GROUP) + tl.arange(0, D // GROUP), s)


@triton.jit
def block_quant_fp8(x_ptr, q_ptr, s_ptr, N, B: tl.constexpr):
    """One ``B x B`` block, one scale (weights quantized in 128 x 128 blocks)."""
    r = tl.program_id(0) * B + tl.arange(0, B)
    c = tl.program_id(1) * B + tl.arange(0, B)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :]).to(tl.float32)
    s = tl.maximum(tl.max(tl.max(tl.abs(x), axis=1), axis=0), 1e-10) / 448.0
    tl.store(q_ptr + r[:, None] * N + c[None, :], (x / s).to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + tl.program_id(0) * tl.num_programs(1) + tl.program_id(1), s)


@triton.jit
def dequant_int8_rows(q_ptr, s_ptr, y_ptr, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + r[:, None] * N + c[None, :], mask=c[None, :] < N, other=0)
    s = tl.load(s_ptr + r)
    tl.store(y_ptr + r[:, None] * N + c[None, :], (q.to(tl.float32) * s[:, None]).to(y_ptr.dtype.element_ty),
             mask=c[None, :] < N)


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None, fills=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {}), **({"fills": fills} if fills else {})}


def _moe(dtype):
    return {"a_ptr": dtype, "b_ptr": dtype, "c_ptr": dtype, "topk_w_ptr": "*fp32", "sorted_ids_ptr": "*i32",
            "expert_ids_ptr": "*i32", "n_post_pad_ptr": "*i32", "N": "i32", "K": "i32", "n_valid": "i32",
            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "TOPK": "constexpr", "ROUTED": "constexpr"}


_E8 = "*fp8e4nv"
CONFIGS = [
    _c("lib_fused_moe_fp16_64x64x64_top2", "fused_moe", _moe("*fp16"), {"BM": 64, "BN": 64, "BK": 64, "TOPK": 2,
       "ROUTED": 0}, launch={"N": 64, "K": 256, "n_valid": 128}, fills={"n_post_pad_ptr": 64}),
    _c("lib_fused_moe_bf16_16x64x128_routed", "fused_moe", _moe("*bf16"), {"BM": 16, "BN": 64, "BK": 128,
       "TOPK": 8, "ROUTED": 1}, stages=4, launch={"N": 64, "K": 512, "n_valid": 128}, fills={"n_post_pad_ptr": 64}),
    _c("lib_fused_moe_fp8_64x128x128_w8", "fused_moe", {**_moe(_E8), "c_ptr": "*bf16"}, {"BM": 64, "BN": 128,
       "BK": 128, "TOPK": 2, "ROUTED": 1}, warps=8, launch={"N": 128, "K": 512, "n_valid": 128},
       fills={"n_post_pad_ptr": 64}),
    _c("lib_expert_count_1024", "expert_count", {"topk_ids_ptr": "*i32", "counts_ptr": "*i32", "n": "i32",
       "BLOCK": "constexpr"}, {"BLOCK": 1024}, launch={"n": 1024}),
    _c("lib_topk_softmax_fp32_e64_t16_top4", "topk_softmax", {"logits_ptr": "*fp32", "w_ptr": "*fp32",
       "ids_ptr": "*i32", "E": "constexpr", "T": "constexpr", "TOPK": "constexpr"}, {"E": 64, "T": 16, "TOPK": 4}),
    _c("lib_per_token_group_quant_fp8_bf16_128x8", "per_token_group_quant_fp8", {"x_ptr": "*bf16", "q_ptr": _E8,
       "s_ptr": "*fp32", "GROUP": "constexpr", "GROUPS_PER": "constexpr"}, {"GROUP": 128, "GROUPS_PER": 8}),
    _c("lib_silu_mul_quant_fp8_fp16_2048_g128", "silu_mul_quant_fp8", {"x_ptr": "*fp16", "q_ptr": _E8,
       "s_ptr": "*fp32", "D": "constexpr", "GROUP": "constexpr"}, {"D": 2048, "GROUP": 128}, warps=8),
    _c("lib_block_quant_fp8_bf16_128", "block_quant_fp8", {"x_ptr": "*bf16", "q_ptr": _E8, "s_ptr": "*fp32",
       "N": "i32", "B": "constexpr"}, {"B": 128}, warps=8, launch={"N": 128}),
    _c("lib_dequant_int8_rows_bf16_4x1024", "dequant_int8_rows", {"q_ptr": "*i8", "s_ptr": "*fp32",
       "y_ptr": "*bf16", "N": "i32", "ROWS": "constexpr", "BLOCK": "constexpr"}, {"ROWS": 4, "BLOCK": 1024},
       launch={"N": 1024}),
]  # fmt: skip
