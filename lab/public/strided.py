"""Kernels whose global reads have a runtime stride along the tile's contiguous dim (a transposed
or sliced view handed to a library kernel: ``x.t()``, ``x[:, ::2]``), so Triton's axis analysis
cannot prove contiguity and copies 4-byte elements one per lane with ``cp.async``: the tutorial's
matmul with every stride an argument (as the tutorial writes it), and a pipelined column reduction
over a strided view. This project's own code after those algorithms, not copies."""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def matmul_strided(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """The tutorial's matmul with all six strides runtime arguments."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def col_sum_strided(x_ptr, out_ptr, n_rows, s_row, s_col, BR: tl.constexpr, BC: tl.constexpr):
    """Column sums of a strided view, BR rows at a time through a pipelined loop."""
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    r = tl.arange(0, BR)
    acc = tl.zeros((BR, BC), tl.float32)
    for i in tl.range(0, tl.cdiv(n_rows, BR), num_stages=3):
        rows = i * BR + r
        acc += tl.load(
            x_ptr + rows[:, None] * s_row + c[None, :] * s_col, mask=rows[:, None] < n_rows, other=0.0
        )
    tl.store(out_ptr + c, tl.sum(acc, axis=0))


@triton.jit
def strided_sum(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    """A sum over every ``s``-th element (a sliced view), BLOCK elements at a time, pipelined."""
    o = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.range(0, tl.cdiv(n, BLOCK), num_stages=3):
        idx = i * BLOCK + o
        acc += tl.load(x_ptr + idx * s, mask=idx < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def matmul_a_strided(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """C = A B with A a view of runtime strides (``a.t()`` or a slice), B and C row-major."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def _c(name, kernel, sig, constexprs, warps=4, stages=3, launch=None):
    out = {"name": name, "kernel": kernel, "signature": sig, "constexprs": constexprs, "num_warps": warps,
           "num_stages": stages, "archs": ["sm90"]}  # fmt: skip
    return {**out, **({"launch": launch} if launch else {})}


def _mm(t="*fp32", **strides):
    sig = {"a_ptr": t, "b_ptr": t, "c_ptr": t, "M": "i32", "N": "i32", "K": "i32", "sam": "i32", "sak": "i32",
           "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr"}  # fmt: skip
    return sig


_CS = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_rows": "i32", "s_row": "i32", "s_col": "i32", "BR": "constexpr",
       "BC": "constexpr"}  # fmt: skip
_SUM = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "s": "i32", "BLOCK": "constexpr"}
_MA = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
       "sak": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}  # fmt: skip
_MA16 = {**_MA, "a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16"}
CONFIGS = [
    _c("str_matmul_fp32_at_64x64x32", "matmul_strided", _mm(), {"BM": 64, "BN": 64, "BK": 32},
       launch={"M": 64, "N": 64, "K": 64, "sam": 1, "sak": 64, "sbk": 64, "sbn": 1, "scm": 64, "scn": 1}),
    _c("str_matmul_fp32_rowmajor_64x64x32", "matmul_strided", _mm(), {"BM": 64, "BN": 64, "BK": 32},
       launch={"M": 64, "N": 64, "K": 64, "sam": 64, "sak": 1, "sbk": 64, "sbn": 1, "scm": 64, "scn": 1}),
    _c("str_matmul_fp32_step2_64x64x32", "matmul_strided", _mm(), {"BM": 64, "BN": 64, "BK": 32},
       launch={"M": 64, "N": 64, "K": 64, "sam": 128, "sak": 2, "sbk": 128, "sbn": 2, "scm": 64, "scn": 1}),
    _c("str_col_sum_fp32_t_32x64", "col_sum_strided", _CS, {"BR": 32, "BC": 64},
       launch={"n_rows": 96, "s_row": 1, "s_col": 96}),
    _c("str_col_sum_fp32_step4_32x64", "col_sum_strided", _CS, {"BR": 32, "BC": 64},
       launch={"n_rows": 96, "s_row": 256, "s_col": 4}),
    _c("str_sum_fp32_s64_256", "strided_sum", _SUM, {"BLOCK": 256}, launch={"n": 1024, "s": 64}),
    _c("str_sum_fp32_s3_256", "strided_sum", _SUM, {"BLOCK": 256}, launch={"n": 1024, "s": 3}),
    _c("str_sum_fp32_s1_512_w8", "strided_sum", _SUM, {"BLOCK": 512}, warps=8, launch={"n": 2048, "s": 1}),
    _c("str_matmul_a_fp32_at_64x64x32", "matmul_a_strided", _MA, {"BM": 64, "BN": 64, "BK": 32},
       launch={"M": 64, "N": 64, "K": 96, "sam": 1, "sak": 64}),
    _c("str_matmul_a_bf16_at_64x64x64", "matmul_a_strided", _MA16, {"BM": 64, "BN": 64, "BK": 64},
       launch={"M": 64, "N": 64, "K": 192, "sam": 1, "sak": 64}),
]  # fmt: skip
