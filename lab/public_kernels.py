"""A second corpus, written here after the algorithms of public Triton code (Triton's tutorials:
fused softmax, layer norm, grouped matmul, fused attention, persistent matmul; and the kinds of
kernel open-source Triton libraries ship: RMS norm and cross-entropy as in LLM kernel libraries,
MoE's gathered matmul, chunked linear attention's in-chunk cumsum, split-K with atomics, group
norm). Not copies: each is this project's own kernel of the same shape of computation, kept to
what changes shared memory (layouts, reductions, dots, control flow). ``CONFIGS`` are what
``bankproof triton corpus --kernels lab/public_kernels.py`` and ``lab/gpu/gpu_plan.py`` compile.
"""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + c, e / tl.sum(e, axis=0), mask=c < n_cols)


@triton.jit
def layer_norm_rows(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(c < n_cols, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    w = tl.load(w_ptr + c, mask=c < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + c, d * tl.rsqrt(var + eps) * w, mask=c < n_cols)


@triton.jit
def rms_norm_block(x_ptr, w_ptr, y_ptr, n_cols, eps, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r[:, None] * n_cols + c[None, :]).to(tl.float32)
    rms = tl.rsqrt(tl.sum(x * x, axis=1) / n_cols + eps)
    w = tl.load(w_ptr + c).to(tl.float32)
    tl.store(y_ptr + r[:, None] * n_cols + c[None, :], (x * rms[:, None] * w[None, :]).to(y_ptr.dtype.element_ty))


@triton.jit
def cross_entropy_online(logits_ptr, target_ptr, loss_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + row * n_cols + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    t = tl.load(target_ptr + row)
    xt = tl.load(logits_ptr + row * n_cols + t).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(s) + m - xt)


@triton.jit
def matmul_grouped(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP: tl.constexpr):
    pid = tl.program_id(0)
    n_m, n_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (GROUP * n_n)
    first = group * GROUP
    size = tl.minimum(n_m - first, GROUP)
    pm = first + (pid % (GROUP * n_n)) % size
    pn = (pid % (GROUP * n_n)) // size
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_at_b(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A^T B with A stored K x M (a weight-gradient shape)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        at = tl.load(a_ptr + (k + rk)[:, None] * M + rm[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(tl.trans(at), b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def attention_causal(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, BM: tl.constexpr, BN: tl.constexpr,
                     D: tl.constexpr):
    start = tl.program_id(0) * BM
    rm = start + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for n in range(0, start + BM, BN):
        rn = n + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + d[:, None])
        s = tl.dot(q, k) * scale
        s = tl.where(rm[:, None] >= rn[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def moe_gather_matmul(x_ptr, idx_ptr, w_ptr, y_ptr, K, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Rows of x gathered by a routing index, times one expert's weight."""
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    rows = tl.load(idx_ptr + r)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(x_ptr + rows[:, None] * K + (k + rk)[None, :])
        b = tl.load(w_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(y_ptr + r[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty))


@triton.jit
def chunk_linear_attention(q_ptr, k_ptr, v_ptr, o_ptr, C: tl.constexpr, D: tl.constexpr):
    """One chunk of causal linear attention: (q k^T masked to the lower triangle) v, with the
    decay cumsum inside the chunk."""
    base = tl.program_id(0) * C * D
    t = tl.arange(0, C)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + base + t[:, None] * D + d[None, :])
    k = tl.load(k_ptr + base + t[:, None] * D + d[None, :])
    v = tl.load(v_ptr + base + t[:, None] * D + d[None, :])
    g = tl.cumsum(tl.sum(k.to(tl.float32), axis=1), axis=0)
    s = tl.dot(q, tl.trans(k)) * tl.exp(g[:, None] - g[None, :])
    s = tl.where(t[:, None] >= t[None, :], s, 0.0)
    tl.store(o_ptr + base + t[:, None] * D + d[None, :], tl.dot(s.to(v.dtype), v).to(o_ptr.dtype.element_ty))


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      SMS: tl.constexpr):
    """One flattened loop over (tile, k-step) pairs, as persistent kernels write it."""
    start = tl.program_id(0)
    n_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    tiles = tl.cdiv(M, BM) * n_n
    my_tiles = tl.cdiv(tiles - start, SMS)
    tile = start - SMS
    ki = -1
    rk = tl.arange(0, BK)
    pm = 0
    pn = 0
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, k_tiles * my_tiles):
        ki = tl.where(ki == k_tiles - 1, 0, ki + 1)
        if ki == 0:
            tile += SMS
            pm = tile // n_n
            pn = tile % n_n
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        a = tl.load(a_ptr + rm[:, None] * K + (ki * BK + rk)[None, :])
        b = tl.load(b_ptr + (ki * BK + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
        if ki == k_tiles - 1:
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))
            acc = tl.zeros((BM, BN), dtype=tl.float32)


@triton.jit
def group_norm(x_ptr, y_ptr, group_size, eps, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + g * group_size + c, mask=c < group_size, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / group_size
    d = tl.where(c < group_size, x - mean, 0.0)
    y = d * tl.rsqrt(tl.sum(d * d, axis=0) / group_size + eps)
    tl.store(y_ptr + g * group_size + c, y, mask=c < group_size)


def _c(name, kernel, sig, constexprs, warps=4, stages=3, archs=("sm90",)):
    return {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs,
            "num_warps": warps, "num_stages": stages, "archs": list(archs)}  # fmt: skip


_MM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}  # fmt: skip
CONFIGS = [
    _c("pub_softmax_fp16_1024", "softmax_rows", {"x_ptr": "*fp16", "y_ptr": "*fp16", "n_cols": "i32",
       "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    _c("pub_softmax_fp32_4096_w8", "softmax_rows", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32",
       "BLOCK": "constexpr"}, {"BLOCK": 4096}, warps=8),
    _c("pub_layer_norm_fp16_2048", "layer_norm_rows", {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16",
       "n_cols": "i32", "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 2048}),
    _c("pub_rms_norm_bf16_16x512", "rms_norm_block", {"x_ptr": "*bf16", "w_ptr": "*bf16", "y_ptr": "*bf16",
       "n_cols": "i32", "eps": "fp32", "ROWS": "constexpr", "BLOCK": "constexpr"}, {"ROWS": 16, "BLOCK": 512}),
    _c("pub_cross_entropy_fp16_1024", "cross_entropy_online", {"logits_ptr": "*fp16", "target_ptr": "*i32",
       "loss_ptr": "*fp32", "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    _c("pub_matmul_grouped_fp16_128x128x32", "matmul_grouped", {**_MM, "GROUP": "constexpr"},
       {"BM": 128, "BN": 128, "BK": 32, "GROUP": 8}),
    _c("pub_matmul_grouped_fp16_64x64x64_w4", "matmul_grouped", {**_MM, "GROUP": "constexpr"},
       {"BM": 64, "BN": 64, "BK": 64, "GROUP": 4}),
    _c("pub_matmul_at_b_fp16_64x64x32", "matmul_at_b", _MM, {"BM": 64, "BN": 64, "BK": 32}),
    _c("pub_attention_causal_fp16_64x64_d64", "attention_causal", {"q_ptr": "*fp16", "k_ptr": "*fp16",
       "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32", "scale": "fp32", "BM": "constexpr", "BN": "constexpr",
       "D": "constexpr"}, {"BM": 64, "BN": 64, "D": 64}, stages=2),
    _c("pub_moe_gather_matmul_fp16_64x64x32", "moe_gather_matmul", {"x_ptr": "*fp16", "idx_ptr": "*i32",
       "w_ptr": "*fp16", "y_ptr": "*fp16", "K": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr",
       "BK": "constexpr"}, {"BM": 64, "BN": 64, "BK": 32}),
    _c("pub_chunk_linear_attention_fp16_64_d64", "chunk_linear_attention", {"q_ptr": "*fp16", "k_ptr": "*fp16",
       "v_ptr": "*fp16", "o_ptr": "*fp16", "C": "constexpr", "D": "constexpr"}, {"C": 64, "D": 64}),
    _c("pub_matmul_persistent_fp16_128x128x64", "matmul_persistent", {**_MM, "SMS": "constexpr"},
       {"BM": 128, "BN": 128, "BK": 64, "SMS": 1}),
    _c("pub_group_norm_fp32_4096_w8", "group_norm", {"x_ptr": "*fp32", "y_ptr": "*fp32", "group_size": "i32",
       "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 4096}, warps=8),
]  # fmt: skip
