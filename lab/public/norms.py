"""Row kernels of the kinds LLM kernel libraries ship (Liger-Kernel, Unsloth, vLLM's layer
kernels): RMS norm forward and backward, fused residual-add RMS norm, layer norm backward with
column partial sums, SwiGLU/GeGLU, rotary embedding, cross-entropy with its gradient written in
place, KL divergence, JSD, softmax backward, L2 norm, log-softmax over row blocks. This project's
own code after those algorithms (not copies), kept to what shapes shared memory."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def rms_norm_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + c, (x * rstd * (1.0 + w)).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def rms_norm_bwd(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, n_rows, n_cols, ROWS_PER: tl.constexpr,
                 BLOCK: tl.constexpr):
    """Each program walks a band of rows (bounded by ``min`` of the band end and the row count)
    and keeps its own partial dW."""
    pid = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), tl.float32)
    for row in range(pid * ROWS_PER, tl.minimum((pid + 1) * ROWS_PER, n_rows)):
        x = tl.load(x_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
        r = tl.load(rstd_ptr + row)
        xh = x * r
        dw += dy * xh
        g = dy * w
        dx = r * (g - xh * (tl.sum(g * xh, axis=0) / n_cols))
        tl.store(dx_ptr + row * n_cols + c, dx.to(dx_ptr.dtype.element_ty), mask=m)
    tl.store(dw_ptr + pid * n_cols + c, dw, mask=m)


@triton.jit
def fused_add_rms_norm(x_ptr, res_ptr, w_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    x += tl.load(res_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    tl.store(res_ptr + row * n_cols + c, x.to(res_ptr.dtype.element_ty), mask=m)
    w = tl.load(w_ptr + c, mask=m, other=0.0).to(tl.float32)
    y = x * tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps) * w
    tl.store(x_ptr + row * n_cols + c, y.to(x_ptr.dtype.element_ty), mask=m)


@triton.jit
def layer_norm_bwd_dx(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, pdw_ptr, pdb_ptr, n_cols,
                      GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    """dX per row, and dW/dB added into one of ``GROUPS`` partial rows (the tutorial's kind,
    with atomics in place of its spin lock)."""
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + c, mask=m).to(tl.float32)
    xh = tl.where(m, (x - tl.load(mean_ptr + row)) * tl.load(rstd_ptr + row), 0.0)
    wdy = tl.where(m, w * dy, 0.0)
    dx = (wdy - (xh * tl.sum(xh * wdy, axis=0) + tl.sum(wdy, axis=0)) / n_cols) * tl.load(rstd_ptr + row)
    tl.store(dx_ptr + row * n_cols + c, dx.to(dx_ptr.dtype.element_ty), mask=m)
    g = row % GROUPS
    tl.atomic_add(pdw_ptr + g * n_cols + c, dy * xh, mask=m)
    tl.atomic_add(pdb_ptr + g * n_cols + c, dy, mask=m)


@triton.jit
def column_partials_sum(p_ptr, out_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
    """Sum a [rows, cols] array of partials over its rows, a column block per program."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for r0 in range(0, n_rows, BM):
        r = r0 + tl.arange(0, BM)
        msk = (r[:, None] < n_rows) & (cols[None, :] < n_cols)
        acc += tl.load(p_ptr + r[:, None] * n_cols + cols[None, :], mask=msk, other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0), mask=cols < n_cols)


@triton.jit
def swiglu(a_ptr, b_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    a = tl.load(a_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n_cols + c, mask=m, other=0.0)
    tl.store(y_ptr + row * n_cols + c, (a * tl.sigmoid(a)).to(b.dtype) * b, mask=m)


@triton.jit
def geglu_tanh(a_ptr, b_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    a = tl.load(a_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    u = 0.7978845608 * (a + 0.044715 * a * a * a)
    t = 2.0 * tl.sigmoid(2.0 * u) - 1.0
    tl.store(y_ptr + row * n_cols + c, (0.5 * a * (1.0 + t) * b).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def rope_qk(q_ptr, k_ptr, cos_ptr, sin_ptr, n_qh, n_kh, HD: tl.constexpr, QH: tl.constexpr, KH: tl.constexpr):
    """Rotary embedding of one token's query and key heads (halves rotated), heads padded to
    powers of two."""
    tok = tl.program_id(0)
    half = tl.arange(0, HD // 2)
    cos = tl.load(cos_ptr + tok * HD + half)[None, :]
    sin = tl.load(sin_ptr + tok * HD + half)[None, :]
    hq = tl.arange(0, QH)[:, None]
    mq = hq < n_qh
    q0 = tl.load(q_ptr + tok * n_qh * HD + hq * HD + half[None, :], mask=mq, other=0.0)
    q1 = tl.load(q_ptr + tok * n_qh * HD + hq * HD + HD // 2 + half[None, :], mask=mq, other=0.0)
    tl.store(q_ptr + tok * n_qh * HD + hq * HD + half[None, :], q0 * cos - q1 * sin, mask=mq)
    tl.store(q_ptr + tok * n_qh * HD + hq * HD + HD // 2 + half[None, :], q1 * cos + q0 * sin, mask=mq)
    hk = tl.arange(0, KH)[:, None]
    mk = hk < n_kh
    k0 = tl.load(k_ptr + tok * n_kh * HD + hk * HD + half[None, :], mask=mk, other=0.0)
    k1 = tl.load(k_ptr + tok * n_kh * HD + hk * HD + HD // 2 + half[None, :], mask=mk, other=0.0)
    tl.store(k_ptr + tok * n_kh * HD + hk * HD + half[None, :], k0 * cos - k1 * sin, mask=mk)
    tl.store(k_ptr + tok * n_kh * HD + hk * HD + HD // 2 + half[None, :], k1 * cos + k0 * sin, mask=mk)


@triton.jit
def cross_entropy_grad_inplace(x_ptr, target_ptr, loss_ptr, n_cols, ignore, BLOCK: tl.constexpr):
    """Two passes over a row of logits: online max and sum, then the gradient written over the
    logits; a row whose target is the ignore index returns at once."""
    row = tl.program_id(0)
    t = tl.load(target_ptr + row)
    if t == ignore:
        for s in range(0, n_cols, BLOCK):
            c = s + tl.arange(0, BLOCK)
            tl.store(x_ptr + row * n_cols + c, 0.0, mask=c < n_cols)
        return
    mx = -float("inf")
    d = 0.0
    for s in range(0, n_cols, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        new = tl.maximum(mx, tl.max(x, axis=0))
        d = d * tl.exp(mx - new) + tl.sum(tl.exp(x - new), axis=0)
        mx = new
    xt = tl.load(x_ptr + row * n_cols + t).to(tl.float32)
    for s in range(0, n_cols, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        g = tl.exp(x - mx) / d - tl.where(c == t, 1.0, 0.0)
        tl.store(x_ptr + row * n_cols + c, g.to(x_ptr.dtype.element_ty), mask=c < n_cols)
    tl.store(loss_ptr + row, tl.log(d) + mx - xt)


@triton.jit
def kl_div_rows(p_ptr, q_ptr, out_ptr, n_cols, LOG_TARGET: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, n_cols, BLOCK):
        c = s + tl.arange(0, BLOCK)
        lp = tl.load(p_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
        q = tl.load(q_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
        if LOG_TARGET:
            acc += tl.exp(q) * (q - lp)
        else:
            acc += tl.where(q > 0, q * (tl.log(q) - lp), 0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def jsd_rows(x_ptr, y_ptr, loss_ptr, dx_ptr, n_cols, beta, BLOCK: tl.constexpr):
    """Generalized Jensen-Shannon divergence of two log-probability rows, with dX."""
    row = tl.program_id(0)
    total = 0.0
    for s in range(0, n_cols, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        y = tl.load(y_ptr + row * n_cols + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        px, py = tl.exp(x), tl.exp(y)
        mix = beta * px + (1 - beta) * py
        lm = tl.log(mix)
        val = beta * px * (x - lm) + (1 - beta) * py * (y - lm)
        total += tl.sum(tl.where(c < n_cols, val, 0.0), axis=0)
        tl.store(dx_ptr + row * n_cols + c, beta * px * (x - lm), mask=c < n_cols)
    tl.store(loss_ptr + row, total)


@triton.jit
def softmax_bwd_rows(y_ptr, dy_ptr, dx_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
    tl.store(dx_ptr + row * n_cols + c, y * (dy - tl.sum(y * dy, axis=0)), mask=c < n_cols)


@triton.jit
def l2_norm_block(x_ptr, y_ptr, n_rows, D: tl.constexpr, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    d = tl.arange(0, D)
    x = tl.load(x_ptr + r[:, None] * D + d[None, :], mask=r[:, None] < n_rows, other=0.0).to(tl.float32)
    y = x * tl.rsqrt(tl.sum(x * x, axis=1) + 1e-6)[:, None]
    tl.store(y_ptr + r[:, None] * D + d[None, :], y.to(y_ptr.dtype.element_ty), mask=r[:, None] < n_rows)


@triton.jit
def log_softmax_block(x_ptr, y_ptr, ROWS: tl.constexpr, N: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :]).to(tl.float32)
    z = x - tl.max(x, axis=1)[:, None]
    tl.store(y_ptr + r[:, None] * N + c[None, :], z - tl.log(tl.sum(tl.exp(z), axis=1))[:, None])


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None, fills=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {}), **({"fills": fills} if fills else {})}


def _sig(*names: str, **types: str) -> dict[str, str]:
    """A signature: names ending in ``_ptr`` are pointers of ``types['ptr']`` unless named in
    ``types``; upper-case names are constexpr; the rest i32 unless named."""
    out = {}
    for n in names:
        out[n] = types.get(n, types.get("ptr", "*fp16") if n.endswith("_ptr") else
                           "constexpr" if n.isupper() or n == n.upper() else "i32")  # fmt: skip
    return out


F32 = "fp32"
CONFIGS = [
    _c("lib_rms_norm_fwd_bf16_4096_w8", "rms_norm_fwd", _sig("x_ptr", "w_ptr", "y_ptr", "rstd_ptr", "n_cols", "eps",
       "BLOCK", ptr="*bf16", rstd_ptr="*fp32", eps=F32), {"BLOCK": 4096}, warps=8, launch={"n_cols": 4096}),
    _c("lib_rms_norm_fwd_fp16_1024", "rms_norm_fwd", _sig("x_ptr", "w_ptr", "y_ptr", "rstd_ptr", "n_cols", "eps",
       "BLOCK", rstd_ptr="*fp32", eps=F32), {"BLOCK": 1024}, launch={"n_cols": 1000}),
    _c("lib_rms_norm_bwd_fp16_2048_w8", "rms_norm_bwd", _sig("dy_ptr", "x_ptr", "w_ptr", "rstd_ptr", "dx_ptr",
       "dw_ptr", "n_rows", "n_cols", "ROWS_PER", "BLOCK", rstd_ptr="*fp32", dw_ptr="*fp32"),
       {"ROWS_PER": 4, "BLOCK": 2048}, warps=8, launch={"n_rows": 3, "n_cols": 2048}),
    _c("lib_fused_add_rms_norm_bf16_8192_w16", "fused_add_rms_norm", _sig("x_ptr", "res_ptr", "w_ptr", "n_cols",
       "eps", "BLOCK", ptr="*bf16", eps=F32), {"BLOCK": 8192}, warps=16, launch={"n_cols": 8192}),
    _c("lib_layer_norm_bwd_dx_fp16_1024", "layer_norm_bwd_dx", _sig("dy_ptr", "x_ptr", "w_ptr", "mean_ptr",
       "rstd_ptr", "dx_ptr", "pdw_ptr", "pdb_ptr", "n_cols", "GROUPS", "BLOCK", mean_ptr="*fp32",
       rstd_ptr="*fp32", pdw_ptr="*fp32", pdb_ptr="*fp32"), {"GROUPS": 32, "BLOCK": 1024}, launch={"n_cols": 1024}),
    _c("lib_column_partials_sum_fp32_32x128", "column_partials_sum", _sig("p_ptr", "out_ptr", "n_rows", "n_cols",
       "BM", "BN", ptr="*fp32"), {"BM": 32, "BN": 128}, launch={"n_rows": 128, "n_cols": 128}),
    _c("lib_swiglu_bf16_4096", "swiglu", _sig("a_ptr", "b_ptr", "y_ptr", "n_cols", "BLOCK", ptr="*bf16"),
       {"BLOCK": 4096}, warps=8, launch={"n_cols": 4096}),
    _c("lib_geglu_fp16_2048", "geglu_tanh", _sig("a_ptr", "b_ptr", "y_ptr", "n_cols", "BLOCK"), {"BLOCK": 2048},
       launch={"n_cols": 2048}),
    _c("lib_rope_fp16_hd128_q32_k8", "rope_qk", _sig("q_ptr", "k_ptr", "cos_ptr", "sin_ptr", "n_qh", "n_kh", "HD",
       "QH", "KH"), {"HD": 128, "QH": 32, "KH": 8}, launch={"n_qh": 32, "n_kh": 8}),
    _c("lib_cross_entropy_grad_bf16_4096", "cross_entropy_grad_inplace", _sig("x_ptr", "target_ptr", "loss_ptr",
       "n_cols", "ignore", "BLOCK", ptr="*bf16", target_ptr="*i32", loss_ptr="*fp32"), {"BLOCK": 4096}, warps=8,
       launch={"n_cols": 16384, "ignore": -100}),
    _c("lib_kl_div_fp32_2048", "kl_div_rows", _sig("p_ptr", "q_ptr", "out_ptr", "n_cols", "LOG_TARGET", "BLOCK",
       ptr="*fp32"), {"LOG_TARGET": 0, "BLOCK": 2048}, warps=8, launch={"n_cols": 8192}),
    _c("lib_jsd_fp32_1024", "jsd_rows", _sig("x_ptr", "y_ptr", "loss_ptr", "dx_ptr", "n_cols", "beta", "BLOCK",
       ptr="*fp32", beta=F32), {"BLOCK": 1024}, launch={"n_cols": 4096}),
    _c("lib_softmax_bwd_fp16_2048", "softmax_bwd_rows", _sig("y_ptr", "dy_ptr", "dx_ptr", "n_cols", "BLOCK"),
       {"BLOCK": 2048}, launch={"n_cols": 2048}),
    _c("lib_l2_norm_bf16_16x128", "l2_norm_block", _sig("x_ptr", "y_ptr", "n_rows", "D", "ROWS", ptr="*bf16"),
       {"D": 128, "ROWS": 16}, launch={"n_rows": 16}),
    _c("lib_log_softmax_fp32_8x512_w8", "log_softmax_block", _sig("x_ptr", "y_ptr", "ROWS", "N", ptr="*fp32"),
       {"ROWS": 8, "N": 512}, warps=8),
]  # fmt: skip
