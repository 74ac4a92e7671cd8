"""Linear-attention and state-space kernels of the kinds their libraries ship
(flash-linear-attention's chunked forms: local cumsum of gates, the inter-chunk state pass, the
chunk output; its fused recurrent forms, plain and gated delta rule; Mamba-2's chunk state and
chunk B·C products; a short causal convolution; a forward substitution for (I + A)^-1 on a 16x16
lower triangle). This project's own code after those algorithms, not copies."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def chunk_local_cumsum(g_ptr, out_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    """Per-head cumulative sums of gates inside one chunk (``[BT, H]`` block, sum over time)."""
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    h = tl.arange(0, H)
    g = tl.load(g_ptr + t[:, None] * H + h[None, :], mask=t[:, None] < T, other=0.0).to(tl.float32)
    tl.store(out_ptr + t[:, None] * H + h[None, :], tl.cumsum(g, axis=0), mask=t[:, None] < T)


@triton.jit
def chunk_fwd_h(k_ptr, v_ptr, g_ptr, h_ptr, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    """The state pass: ``h`` ([K, V]) stored per chunk, decayed by the chunk's last gate and
    advanced by ``k^T v``; the chunk count is ``cdiv(T, BT)``."""
    kk = tl.arange(0, K)
    vv = tl.arange(0, V)
    h = tl.zeros((K, V), tl.float32)
    for c in range(0, tl.cdiv(T, BT)):
        tl.store(h_ptr + c * K * V + kk[:, None] * V + vv[None, :], h.to(h_ptr.dtype.element_ty))
        t = c * BT + tl.arange(0, BT)
        kt = tl.load(k_ptr + t[None, :] * K + kk[:, None], mask=t[None, :] < T, other=0.0)
        v = tl.load(v_ptr + t[:, None] * V + vv[None, :], mask=t[:, None] < T, other=0.0)
        g_last = tl.load(g_ptr + tl.minimum(c * BT + BT, T) - 1)
        g = tl.load(g_ptr + t, mask=t < T, other=0.0)
        h = h * tl.exp(g_last) + tl.dot(kt, (v * tl.exp(g_last - g)[:, None]).to(kt.dtype))


@triton.jit
def chunk_fwd_o(q_ptr, k_ptr, v_ptr, h_ptr, o_ptr, scale, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    c = tl.program_id(0)
    t = c * BT + tl.arange(0, BT)
    kk = tl.arange(0, K)
    vv = tl.arange(0, V)
    q = tl.load(q_ptr + t[:, None] * K + kk[None, :])
    kt = tl.load(k_ptr + t[None, :] * K + kk[:, None])
    h = tl.load(h_ptr + c * K * V + kk[:, None] * V + vv[None, :])
    v = tl.load(v_ptr + t[:, None] * V + vv[None, :])
    s = tl.dot(q, kt)
    s = tl.where(tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :], s, 0.0)
    o = (tl.dot(q, h) + tl.dot(s.to(v.dtype), v)) * scale
    tl.store(o_ptr + t[:, None] * V + vv[None, :], o.to(o_ptr.dtype.element_ty))


@triton.jit
def fused_recurrent(q_ptr, k_ptr, v_ptr, o_ptr, T, scale, K: tl.constexpr, V: tl.constexpr):
    """Token by token: ``h += k v^T``, ``o = h^T q``, the state in registers."""
    kk = tl.arange(0, K)
    vv = tl.arange(0, V)
    h = tl.zeros((K, V), tl.float32)
    for t in range(0, T):
        q = tl.load(q_ptr + t * K + kk).to(tl.float32) * scale
        k = tl.load(k_ptr + t * K + kk).to(tl.float32)
        v = tl.load(v_ptr + t * V + vv).to(tl.float32)
        h += k[:, None] * v[None, :]
        tl.store(o_ptr + t * V + vv, tl.sum(h * q[:, None], axis=0).to(o_ptr.dtype.element_ty))


@triton.jit
def fused_recurrent_gated_delta(q_ptr, k_ptr, v_ptr, g_ptr, beta_ptr, o_ptr, T, K: tl.constexpr,
                                V: tl.constexpr):
    """Gated delta rule: ``h = h*exp(g)``; ``v' = beta (v - h^T k)``; ``h += k v'^T``; ``o = h^T q``."""
    kk = tl.arange(0, K)
    vv = tl.arange(0, V)
    h = tl.zeros((K, V), tl.float32)
    for t in range(0, T):
        q = tl.load(q_ptr + t * K + kk).to(tl.float32)
        k = tl.load(k_ptr + t * K + kk).to(tl.float32)
        v = tl.load(v_ptr + t * V + vv).to(tl.float32)
        h *= tl.exp(tl.load(g_ptr + t))
        v = (v - tl.sum(h * k[:, None], axis=0)) * tl.load(beta_ptr + t)
        h += k[:, None] * v[None, :]
        tl.store(o_ptr + t * V + vv, tl.sum(h * q[:, None], axis=0).to(o_ptr.dtype.element_ty))


@triton.jit
def ssd_chunk_state(x_ptr, b_ptr, dA_ptr, st_ptr, P: tl.constexpr, N: tl.constexpr, L: tl.constexpr):
    """Mamba-2 chunk state: ``states[p, n] = sum_l x[l, p] B[l, n] exp(dA_last - dA[l])``."""
    c = tl.program_id(0)
    l_ = c * L + tl.arange(0, L)
    p = tl.arange(0, P)
    n = tl.arange(0, N)
    xt = tl.load(x_ptr + l_[None, :] * P + p[:, None])
    b = tl.load(b_ptr + l_[:, None] * N + n[None, :])
    da = tl.load(dA_ptr + l_)
    decay = tl.exp(tl.load(dA_ptr + c * L + L - 1) - da)
    st = tl.dot(xt, (b * decay[:, None]).to(xt.dtype))
    tl.store(st_ptr + c * P * N + p[:, None] * N + n[None, :], st)


@triton.jit
def ssd_bmm_chunk(c_ptr, b_ptr, out_ptr, N: tl.constexpr, L: tl.constexpr, BK: tl.constexpr):
    """``C B^T`` inside a chunk, the state dimension walked in ``BK`` slices."""
    ch = tl.program_id(0)
    l_ = ch * L + tl.arange(0, L)
    kk = tl.arange(0, BK)
    acc = tl.zeros((L, L), tl.float32)
    for k in range(0, N, BK):
        cc = tl.load(c_ptr + l_[:, None] * N + (k + kk)[None, :])
        bt = tl.load(b_ptr + l_[None, :] * N + (k + kk)[:, None])
        acc += tl.dot(cc, bt)
    tl.store(out_ptr + ch * L * L + tl.arange(0, L)[:, None] * L + tl.arange(0, L)[None, :], acc)


@triton.jit
def causal_conv1d(x_ptr, w_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr, W: tl.constexpr):
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    d = tl.arange(0, D)
    acc = tl.zeros((BT, D), tl.float32)
    for j in tl.static_range(W):
        src = t - (W - 1) + j
        x = tl.load(x_ptr + src[:, None] * D + d[None, :], mask=(src[:, None] >= 0) & (src[:, None] < T), other=0.0)
        acc += x.to(tl.float32) * tl.load(w_ptr + d * W + j).to(tl.float32)[None, :]
    y = acc * tl.sigmoid(acc)
    tl.store(y_ptr + t[:, None] * D + d[None, :], y.to(y_ptr.dtype.element_ty), mask=t[:, None] < T)


@triton.jit
def solve_tril_16(a_ptr, out_ptr, B: tl.constexpr):
    """(I + A)^-1 for a strictly lower-triangular ``B x B`` A, by forward substitution row by row."""
    r = tl.arange(0, B)
    a = -tl.load(a_ptr + tl.program_id(0) * B * B + r[:, None] * B + r[None, :]).to(tl.float32)
    a = tl.where(r[:, None] > r[None, :], a, 0.0)
    for i in range(1, B):
        row = tl.sum(tl.where(r[:, None] == i, a, 0.0), axis=0)
        row = row + tl.sum(row[:, None] * a, axis=0)
        a = tl.where(r[:, None] == i, row[None, :], a)
    a += r[:, None] == r[None, :]
    tl.store(out_ptr + tl.program_id(0) * B * B + r[:, None] * B + r[None, :], a.to(out_ptr.dtype.element_ty))


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None, fills=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {}), **({"fills": fills} if fills else {})}


_C = "constexpr"
CONFIGS = [
    _c("lib_chunk_local_cumsum_fp32_64xh16", "chunk_local_cumsum", {"g_ptr": "*fp32", "out_ptr": "*fp32",
       "T": "i32", "H": _C, "BT": _C}, {"H": 16, "BT": 64}, launch={"T": 64}),
    _c("lib_chunk_fwd_h_bf16_k64v64_bt64", "chunk_fwd_h", {"k_ptr": "*bf16", "v_ptr": "*bf16", "g_ptr": "*fp32",
       "h_ptr": "*bf16", "T": "i32", "K": _C, "V": _C, "BT": _C}, {"K": 64, "V": 64, "BT": 64},
       launch={"T": 256}),
    _c("lib_chunk_fwd_h_fp16_k128v64_bt64_w8", "chunk_fwd_h", {"k_ptr": "*fp16", "v_ptr": "*fp16",
       "g_ptr": "*fp32", "h_ptr": "*fp16", "T": "i32", "K": _C, "V": _C, "BT": _C}, {"K": 128, "V": 64, "BT": 64},
       warps=8, launch={"T": 200}),
    _c("lib_chunk_fwd_o_bf16_k64v64_bt64", "chunk_fwd_o", {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16",
       "h_ptr": "*bf16", "o_ptr": "*bf16", "scale": "fp32", "K": _C, "V": _C, "BT": _C},
       {"K": 64, "V": 64, "BT": 64}),
    _c("lib_fused_recurrent_fp16_k64v64", "fused_recurrent", {"q_ptr": "*fp16", "k_ptr": "*fp16",
       "v_ptr": "*fp16", "o_ptr": "*fp16", "T": "i32", "scale": "fp32", "K": _C, "V": _C}, {"K": 64, "V": 64},
       warps=2, launch={"T": 32}),
    _c("lib_fused_recurrent_gated_delta_bf16_k128v128", "fused_recurrent_gated_delta", {"q_ptr": "*bf16",
       "k_ptr": "*bf16", "v_ptr": "*bf16", "g_ptr": "*fp32", "beta_ptr": "*fp32", "o_ptr": "*bf16", "T": "i32",
       "K": _C, "V": _C}, {"K": 128, "V": 128}, warps=4, launch={"T": 16}),
    _c("lib_ssd_chunk_state_fp16_p64n128_l64", "ssd_chunk_state", {"x_ptr": "*fp16", "b_ptr": "*fp16",
       "dA_ptr": "*fp32", "st_ptr": "*fp32", "P": _C, "N": _C, "L": _C}, {"P": 64, "N": 128, "L": 64}),
    _c("lib_ssd_bmm_chunk_bf16_n128_l64", "ssd_bmm_chunk", {"c_ptr": "*bf16", "b_ptr": "*bf16",
       "out_ptr": "*fp32", "N": _C, "L": _C, "BK": _C}, {"N": 128, "L": 64, "BK": 32}),
    _c("lib_causal_conv1d_bf16_d256_w4", "causal_conv1d", {"x_ptr": "*bf16", "w_ptr": "*bf16", "y_ptr": "*bf16",
       "T": "i32", "D": _C, "BT": _C, "W": _C}, {"D": 256, "BT": 16, "W": 4}, launch={"T": 16}),
    _c("lib_solve_tril_fp32_16", "solve_tril_16", {"a_ptr": "*fp32", "out_ptr": "*fp32", "B": _C}, {"B": 16},
       warps=1),
]  # fmt: skip
