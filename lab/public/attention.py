"""Attention kernels of the kinds attention libraries and serving engines ship (Triton's fused
attention tutorial, FlashAttention's Triton backward, vLLM/SGLang decode and prefix attention):
forward with causal and sliding-window bounds, the backward's preprocess, dK/dV and dQ passes,
split-KV decode (per-head vector and grouped-query dot forms) with its reduce, and a paged
prefix-prefill over a block table. This project's own code after those algorithms, not copies."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, seq, scale, BM: tl.constexpr, BN: tl.constexpr,
             D: tl.constexpr, CAUSAL: tl.constexpr, WINDOW: tl.constexpr):
    """Flash forward: causal ends at the diagonal; a window starts ``WINDOW`` keys before the
    block (``max`` bound); neither: every key."""
    bh = tl.program_id(1)
    start = tl.program_id(0) * BM
    rm = start + tl.arange(0, BM)
    d = tl.arange(0, D)
    base = bh * seq * D
    q = tl.load(q_ptr + base + rm[:, None] * D + d[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    lo = 0
    hi = seq
    if CAUSAL:
        hi = tl.minimum(start + BM, seq)
    if WINDOW > 0:
        lo = tl.maximum(start - WINDOW, 0) // BN * BN
    for n in range(lo, hi, BN):
        rn = n + tl.arange(0, BN)
        k = tl.load(k_ptr + base + rn[None, :] * D + d[:, None])
        s = tl.dot(q, k) * scale
        if CAUSAL:
            s = tl.where(rm[:, None] >= rn[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + rn[:, None] * D + d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(lse_ptr + bh * seq + rm, m_i + tl.math.log2(l_i))
    tl.store(o_ptr + base + rm[:, None] * D + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def attn_bwd_preprocess(o_ptr, do_ptr, delta_ptr, BM: tl.constexpr, D: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    o = tl.load(o_ptr + rm[:, None] * D + d[None, :]).to(tl.float32)
    do = tl.load(do_ptr + rm[:, None] * D + d[None, :]).to(tl.float32)
    tl.store(delta_ptr + rm, tl.sum(o * do, axis=1))


@triton.jit
def attn_bwd_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, seq, scale,
                  BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """One key block; walks the query blocks at and below it (causal)."""
    start = tl.program_id(0) * BN
    rn = start + tl.arange(0, BN)
    d = tl.arange(0, D)
    k = tl.load(k_ptr + rn[:, None] * D + d[None, :])
    v = tl.load(v_ptr + rn[:, None] * D + d[None, :])
    dk = tl.zeros((BN, D), tl.float32)
    dv = tl.zeros((BN, D), tl.float32)
    for m0 in range(start, seq, BM):
        rm = m0 + tl.arange(0, BM)
        qt = tl.load(q_ptr + rm[None, :] * D + d[:, None])
        lse = tl.load(lse_ptr + rm)
        pt = tl.math.exp2(tl.dot(k, qt) * scale - lse[None, :])
        pt = tl.where(rm[None, :] >= rn[:, None], pt, 0.0)
        do = tl.load(do_ptr + rm[:, None] * D + d[None, :])
        dv += tl.dot(pt.to(do.dtype), do)
        dpt = tl.dot(v, tl.trans(do)).to(tl.float32)
        dst = pt * (dpt - tl.load(delta_ptr + rm)[None, :])
        dk += tl.dot(dst.to(qt.dtype), tl.trans(qt))
    tl.store(dk_ptr + rn[:, None] * D + d[None, :], (dk * scale).to(dk_ptr.dtype.element_ty))
    tl.store(dv_ptr + rn[:, None] * D + d[None, :], dv.to(dv_ptr.dtype.element_ty))


@triton.jit
def attn_bwd_dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, seq, scale, BM: tl.constexpr,
                BN: tl.constexpr, D: tl.constexpr):
    """One query block; walks the key blocks up to the diagonal."""
    start = tl.program_id(0) * BM
    rm = start + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :])
    do = tl.load(do_ptr + rm[:, None] * D + d[None, :])
    lse = tl.load(lse_ptr + rm)
    delta = tl.load(delta_ptr + rm)
    dq = tl.zeros((BM, D), tl.float32)
    for n0 in range(0, tl.minimum(start + BM, seq), BN):
        rn = n0 + tl.arange(0, BN)
        kt = tl.load(k_ptr + rn[None, :] * D + d[:, None])
        vt = tl.load(v_ptr + rn[None, :] * D + d[:, None])
        p = tl.math.exp2(tl.dot(q, kt) * scale - lse[:, None])
        p = tl.where(rm[:, None] >= rn[None, :], p, 0.0)
        ds = p * (tl.dot(do, vt).to(tl.float32) - delta[:, None])
        dq += tl.dot(ds.to(kt.dtype), tl.trans(kt))
    tl.store(dq_ptr + rm[:, None] * D + d[None, :], (dq * scale).to(dq_ptr.dtype.element_ty))


@triton.jit
def decode_split_kv(q_ptr, k_cache, v_cache, table_ptr, seqlen_ptr, part_ptr, lse_ptr, scale,
                    SPLITS: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """One (sequence, head, split): a query vector against the split's keys, gathered through a
    token table; the sequence length is loaded, so the split's bounds are known at run time only."""
    b = tl.program_id(0)
    split = tl.program_id(1)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + b * D + d).to(tl.float32)
    length = tl.load(seqlen_ptr + b)
    per = tl.cdiv(length, SPLITS)
    lo = split * per
    hi = tl.minimum(lo + per, length)
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros((D,), tl.float32)
    for n in range(lo, hi, BN):
        rn = n + tl.arange(0, BN)
        tok = tl.load(table_ptr + b * 4096 + rn, mask=rn < hi, other=0)
        k = tl.load(k_cache + tok[:, None] * D + d[None, :], mask=(rn < hi)[:, None], other=0.0).to(tl.float32)
        s = tl.where(rn < hi, tl.sum(q[None, :] * k, axis=1) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_cache + tok[:, None] * D + d[None, :], mask=(rn < hi)[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    tl.store(part_ptr + (b * SPLITS + split) * D + d, acc / l_i)
    tl.store(lse_ptr + b * SPLITS + split, m_i + tl.log(l_i))


@triton.jit
def decode_grouped(q_ptr, k_cache, v_cache, table_ptr, seqlen_ptr, o_ptr, scale, H: tl.constexpr,
                   BN: tl.constexpr, D: tl.constexpr):
    """Grouped-query decode: the ``H`` query heads sharing one key head as a dot's rows."""
    b = tl.program_id(0)
    h = tl.arange(0, H)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + b * H * D + h[:, None] * D + d[None, :])
    length = tl.load(seqlen_ptr + b)
    m_i = tl.full((H,), -float("inf"), tl.float32)
    l_i = tl.zeros((H,), tl.float32)
    acc = tl.zeros((H, D), tl.float32)
    for n in range(0, length, BN):
        rn = n + tl.arange(0, BN)
        tok = tl.load(table_ptr + b * 4096 + rn, mask=rn < length, other=0)
        kt = tl.load(k_cache + tok[None, :] * D + d[:, None], mask=(rn < length)[None, :], other=0.0)
        s = tl.dot(q, kt) * scale
        s = tl.where((rn < length)[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_cache + tok[:, None] * D + d[None, :], mask=(rn < length)[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    tl.store(o_ptr + b * H * D + h[:, None] * D + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def decode_reduce(part_ptr, lse_ptr, o_ptr, SPLITS: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0)
    s = tl.arange(0, SPLITS)
    d = tl.arange(0, D)
    lse = tl.load(lse_ptr + b * SPLITS + s)
    w = tl.exp(lse - tl.max(lse, axis=0))
    part = tl.load(part_ptr + (b * SPLITS + s)[:, None] * D + d[None, :])
    o = tl.sum(part * w[:, None], axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + b * D + d, o.to(o_ptr.dtype.element_ty))


@triton.jit
def prefix_prefill(q_ptr, k_cache, v_cache, block_table, ctx_len_ptr, o_ptr, scale, BM: tl.constexpr,
                   BN: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    """New tokens' queries against a cached prefix held in pages (a block table), length loaded."""
    b = tl.program_id(0)
    rm = tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + (b * BM + rm)[:, None] * D + d[None, :])
    ctx = tl.load(ctx_len_ptr + b)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for n in range(0, ctx, BN):
        rn = n + tl.arange(0, BN)
        page = tl.load(block_table + b * 256 + rn // PAGE, mask=rn < ctx, other=0)
        slot = page * PAGE + rn % PAGE
        kt = tl.load(k_cache + slot[None, :] * D + d[:, None], mask=(rn < ctx)[None, :], other=0.0)
        s = tl.where((rn < ctx)[None, :], tl.dot(q, kt) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        v = tl.load(v_cache + slot[:, None] * D + d[None, :], mask=(rn < ctx)[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
    tl.store(o_ptr + (b * BM + rm)[:, None] * D + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None, fills=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {}), **({"fills": fills} if fills else {})}


_F = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "lse_ptr": "*fp32", "seq": "i32",
      "scale": "fp32", "BM": "constexpr", "BN": "constexpr", "D": "constexpr", "CAUSAL": "constexpr",
      "WINDOW": "constexpr"}  # fmt: skip
_B = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "do_ptr": "*fp16", "lse_ptr": "*fp32",
      "delta_ptr": "*fp32"}  # fmt: skip
_DEC = {"q_ptr": "*fp16", "k_cache": "*fp16", "v_cache": "*fp16", "table_ptr": "*i32", "seqlen_ptr": "*i32"}
CONFIGS = [
    _c("lib_attn_fwd_fp16_128x64_d128_w8", "attn_fwd", _F, {"BM": 128, "BN": 64, "D": 128, "CAUSAL": 0,
       "WINDOW": 0}, warps=8, launch={"seq": 256}),
    _c("lib_attn_fwd_causal_fp16_128x64_d64", "attn_fwd", _F, {"BM": 128, "BN": 64, "D": 64, "CAUSAL": 1,
       "WINDOW": 0}, stages=4, launch={"seq": 128}),
    _c("lib_attn_fwd_window_bf16_64x32_d64", "attn_fwd", {**_F, "q_ptr": "*bf16", "k_ptr": "*bf16",
       "v_ptr": "*bf16", "o_ptr": "*bf16"}, {"BM": 64, "BN": 32, "D": 64, "CAUSAL": 0, "WINDOW": 64},
       launch={"seq": 128}),
    _c("lib_attn_bwd_preprocess_fp16_64_d128", "attn_bwd_preprocess", {"o_ptr": "*fp16", "do_ptr": "*fp16",
       "delta_ptr": "*fp32", "BM": "constexpr", "D": "constexpr"}, {"BM": 64, "D": 128}),
    _c("lib_attn_bwd_dkdv_fp16_32x128_d64_w8", "attn_bwd_dkdv", {**_B, "dk_ptr": "*fp16", "dv_ptr": "*fp16",
       "seq": "i32", "scale": "fp32", "BM": "constexpr", "BN": "constexpr", "D": "constexpr"},
       {"BM": 32, "BN": 128, "D": 64}, warps=8, launch={"seq": 256}),
    _c("lib_attn_bwd_dq_fp16_128x32_d64_w8", "attn_bwd_dq", {**_B, "dq_ptr": "*fp16", "seq": "i32",
       "scale": "fp32", "BM": "constexpr", "BN": "constexpr", "D": "constexpr"}, {"BM": 128, "BN": 32, "D": 64},
       warps=8, launch={"seq": 256}),
    _c("lib_decode_split_kv_fp16_64_d128", "decode_split_kv", {**_DEC, "part_ptr": "*fp32", "lse_ptr": "*fp32",
       "scale": "fp32", "SPLITS": "constexpr", "BN": "constexpr", "D": "constexpr"},
       {"SPLITS": 8, "BN": 64, "D": 128}, stages=2, fills={"seqlen_ptr": 1024}),
    _c("lib_decode_grouped_fp16_h16_64_d128", "decode_grouped", {**_DEC, "o_ptr": "*fp16", "scale": "fp32",
       "H": "constexpr", "BN": "constexpr", "D": "constexpr"}, {"H": 16, "BN": 64, "D": 128}, stages=2,
       fills={"seqlen_ptr": 256}),
    _c("lib_decode_grouped_bf16_h16_32_d64", "decode_grouped", {**_DEC, "q_ptr": "*bf16", "k_cache": "*bf16",
       "v_cache": "*bf16", "o_ptr": "*bf16", "scale": "fp32", "H": "constexpr", "BN": "constexpr",
       "D": "constexpr"}, {"H": 16, "BN": 32, "D": 64}, stages=3, fills={"seqlen_ptr": 128}),
    _c("lib_decode_reduce_fp32_8_d128", "decode_reduce", {"part_ptr": "*fp32", "lse_ptr": "*fp32",
       "o_ptr": "*fp16", "SPLITS": "constexpr", "D": "constexpr"}, {"SPLITS": 8, "D": 128}),
    _c("lib_prefix_prefill_fp16_64x64_d128", "prefix_prefill", {"q_ptr": "*fp16", "k_cache": "*fp16",
       "v_cache": "*fp16", "block_table": "*i32", "ctx_len_ptr": "*i32", "o_ptr": "*fp16", "scale": "fp32",
       "BM": "constexpr", "BN": "constexpr", "D": "constexpr", "PAGE": "constexpr"},
       {"BM": 64, "BN": 64, "D": 128, "PAGE": 16}, stages=2, fills={"ctx_len_ptr": 256}),
]  # fmt: skip
