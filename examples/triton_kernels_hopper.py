"""A user kernels file for ``bankproof triton corpus --kernels``: four kernels written the way
Hopper/Blackwell Triton code is written now, and the configurations to compile them with.

    bankproof triton corpus --kernels examples/triton_kernels_hopper.py --arch sm90

The ledger lists every shared-memory instruction of each compiled kernel: the TMA matmul's
``stmatrix`` epilogue, the scratch of the cross-warp reduction and of the scan, and (on sm100)
the warp-specialized partitions with their own warps.
"""

# ruff: noqa: N803 - Triton's constexpr parameters are upper case by convention
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def tma_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def persistent_ws_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), warp_specialize=True):
        off_m = (tile // tiles_n) * BM
        off_n = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc)
        c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def column_sum(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """Sum over rows: the rows are spread over the warps, so the partial sums meet in shared memory."""
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(y_ptr + tl.arange(0, N), tl.sum(x, axis=0))


@triton.jit
def prefix_sum(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


_MM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}  # fmt: skip
_XY = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
_HOPPER = {"num_warps": 4, "num_stages": 3, "archs": ["sm90", "sm100"]}
CONFIGS = [
    {"name": "tma_matmul_128x128x64", "kernel": "tma_matmul", "signature": _MM,
     "constexprs": {"BM": 128, "BN": 128, "BK": 64}, **_HOPPER},
    {"name": "persistent_ws_matmul_128x128x64", "kernel": "persistent_ws_matmul", "signature": _MM,
     "constexprs": {"BM": 128, "BN": 128, "BK": 64}, **_HOPPER},
    {"name": "column_sum_64x128_w8", "kernel": "column_sum",
     "signature": {**_XY, "M": "constexpr", "N": "constexpr"},
     "constexprs": {"M": 64, "N": 128}, "num_warps": 8, "num_stages": 1},
    {"name": "prefix_sum_4096_w8", "kernel": "prefix_sum", "signature": {**_XY, "N": "constexpr"},
     "constexprs": {"N": 4096}, "num_warps": 8, "num_stages": 1},
]  # fmt: skip
