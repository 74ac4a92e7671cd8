"""The built-in corpus's Triton kernels (imported only by compile workers; needs the ``triton``
extra). Each kernel is a small, ordinary Triton program of the kind the corpus names."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_mixed(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """fp16 activations times int8 weights, upcast in registers."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :]).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def transpose(x_ptr, y_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(x_ptr + r[:, None] * B + r[None, :])
    tl.store(y_ptr + r[:, None] * B + r[None, :], tl.trans(x))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, L, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, L, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None])
        s = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def layer_norm(x_ptr, y_ptr, w_ptr, N: tl.constexpr, R: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :]).to(tl.float32)
    mean = tl.sum(x, 1) / N
    xc = x - mean[:, None]
    var = tl.sum(xc * xc, 1) / N
    w = tl.load(w_ptr + cols)
    y = xc / tl.sqrt(var + 1e-5)[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], y.to(y_ptr.dtype.element_ty))


@triton.jit
def softmax(x_ptr, y_ptr, N: tl.constexpr, R: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :]).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    tl.store(
        y_ptr + rows[:, None] * N + cols[None, :], (e / tl.sum(e, 1)[:, None]).to(y_ptr.dtype.element_ty)
    )


@triton.jit
def column_sum(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """A reduction across rows: the result's layout differs from the input's."""
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(y_ptr + c, tl.sum(x, 0))


@triton.jit
def gather_scatter(x_ptr, idx_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    idx = tl.load(idx_ptr + r)
    x = tl.load(x_ptr + idx[:, None] * N + c[None, :])
    tl.store(y_ptr + c[None, :] * M + idx[:, None], x)


@triton.jit
def matmul_tma(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Hopper/Blackwell style: tiles in and out through tensor descriptors (TMA); the epilogue
    tile is written to shared memory for the TMA store."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def cumsum(x_ptr, y_ptr, N: tl.constexpr):
    """An inclusive scan over one block: ``tt.scan`` with cross-warp scratch."""
    r = tl.arange(0, N)
    tl.store(y_ptr + r, tl.cumsum(tl.load(x_ptr + r), 0))


@triton.jit
def histogram(x_ptr, y_ptr, N: tl.constexpr, BINS: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + tl.arange(0, BINS), tl.histogram(tl.load(x_ptr + r), BINS))


@triton.jit
def gather_rows(x_ptr, idx_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """``tl.gather`` along the row axis (an index tensor of the source's shape)."""
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    idx = tl.load(idx_ptr + r[:, None] * N + c[None, :])
    tl.store(y_ptr + r[:, None] * N + c[None, :], tl.gather(x, idx, 0))


@triton.jit
def sort_rows(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(y_ptr + r[:, None] * N + c[None, :], tl.sort(x, 1))


@triton.jit
def column_max(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """A reduction across rows over several warps (``tl.max(x, axis=0)``)."""
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    tl.store(y_ptr + c, tl.max(tl.load(x_ptr + r[:, None] * N + c[None, :]), 0))


@triton.jit
def cross_entropy(logits_ptr, target_ptr, loss_ptr, N: tl.constexpr, R: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, N)
    x = tl.load(logits_ptr + rows[:, None] * N + cols[None, :]).to(tl.float32)
    m = tl.max(x, 1)
    lse = m + tl.log(tl.sum(tl.exp(x - m[:, None]), 1))
    t = tl.load(target_ptr + rows)
    picked = tl.sum(tl.where(cols[None, :] == t[:, None], x, 0.0), 1)
    tl.store(loss_ptr + rows, lse - picked)


@triton.jit
def matmul_split_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Split-K: each program sums a slice of K and adds its partial tile atomically."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.program_id(2) * BK, K, BK * tl.num_programs(2)):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_tma_persistent_ws(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """Persistent, warp-specialized TMA matmul (``tl.range(..., warp_specialize=True)``)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True, warp_specialize=True):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def attention_fwd_tma(q_ptr, k_ptr, v_ptr, o_ptr, L, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """Attention forward with Q, K, V and O through tensor descriptors."""
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[L, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[L, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[L, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[L, D], strides=[D, 1], block_shape=[BM, D])
    start_m = tl.program_id(0) * BM
    q = q_desc.load([start_m, 0])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, L, BN):
        s = tl.dot(q, k_desc.load([start, 0]).T)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v_desc.load([start, 0]))
        m_i = m_new
    o_desc.store([start_m, 0], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def topk_rows(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """The K largest values of each row (``tl.topk``)."""
    r = tl.arange(0, M)
    x = tl.load(x_ptr + r[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(y_ptr + r[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K, dim=1))


@triton.jit
def matmul_mxfp8(
    a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
):  # fmt: skip
    """Block-scaled fp8 matmul (``tl.dot_scaled``, e4m3 with one e8m0 scale per 32 values)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        sa = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        sb = tl.load(b_scale_ptr + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
