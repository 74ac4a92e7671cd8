"""Seventeen numba-cuda kernels of the shapes numba's documentation and tutorials teach (the shared-memory
matmul of numba's CUDA guide, tiled transposes, a tree reduction, a shared histogram, a stencil
with halo, a Hillis-Steele scan, a convolution tile, a strided column read, a float atomic),
written here, compiled to PTX by numba's own compiler (libNVVM 13.0, no GPU) and kept as PTX:
examples/cuda/public/numba_*.ptx and their [[case]] entries (numba passes an array as 5 + 2*ndim
parameters: meminfo, parent, nitems, itemsize, data, shape..., strides...; the cases give them by
position).

    python -m lab.numba_kernels examples/cuda/public     # writes the PTX, prints the cases
"""

# ruff: noqa: N806 - tile sizes are upper case as in numba's examples
from __future__ import annotations

import sys
from pathlib import Path

from numba import cuda, float32, float64, int32, uint8

TPB = 16


def matmul_shared(A, B, C):  # numba's CUDA guide, "shared memory" matmul
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def transpose_tile(a, out):  # 32x32 tile, read down columns: 32-way conflicts
    tile = cuda.shared.array(shape=(32, 32), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, 32, 8):
        tile[ty + j, tx] = a[ty + j, tx]
    cuda.syncthreads()
    for j in range(0, 32, 8):
        out[ty + j, tx] = tile[tx, ty + j]


def transpose_padded(a, out):  # the same with a 33-float row: conflict-free
    tile = cuda.shared.array(shape=(32, 33), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, 32, 8):
        tile[ty + j, tx] = a[ty + j, tx]
    cuda.syncthreads()
    for j in range(0, 32, 8):
        out[ty + j, tx] = tile[tx, ty + j]


def reduce_tree(a, out):  # sequential addressing tree reduction of 256 values
    s = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.blockIdx.x * 256 + t]
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def histogram_shared(data, bins):  # 256 bins in shared memory, integer atomics
    h = cuda.shared.array(256, dtype=int32)
    t = cuda.threadIdx.x
    h[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(h, data[i] & 255, 1)
    cuda.syncthreads()
    cuda.atomic.add(bins, t, h[t])


def stencil_halo(a, out):  # 1D 7-point stencil with a 3-element halo each side
    s = cuda.shared.array(134, dtype=float32)
    t = cuda.threadIdx.x
    g = cuda.grid(1)
    s[t + 3] = a[g + 3]
    if t < 3:
        s[t] = a[g]
        s[t + 131] = a[g + 131]
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(7):
        acc += s[t + k]
    out[g] = acc


def scan_hillis_steele(a, out):  # inclusive scan of 128 values, double buffered
    s = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    src, off = 0, 1
    while off < 128:
        dst = 128 - src
        if t >= off:
            s[dst + t] = s[src + t] + s[src + t - off]
        else:
            s[dst + t] = s[src + t]
        cuda.syncthreads()
        src = dst
        off *= 2
    out[t] = s[src + t]


def conv_tile(img, w, out):  # 3x3 convolution of a 16x16 tile with its 1-pixel border in shared
    s = cuda.shared.array(shape=(18, 18), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty + 1, tx + 1] = img[ty + 1, tx + 1]
    if tx == 0:
        s[ty + 1, 0] = img[ty + 1, 0]
        s[ty + 1, 17] = img[ty + 1, 17]
    if ty == 0:
        s[0, tx + 1] = img[0, tx + 1]
        s[17, tx + 1] = img[17, tx + 1]
    cuda.syncthreads()
    acc = float32(0.0)
    for i in range(3):
        for j in range(3):
            acc += s[ty + i, tx + j] * w[i, j]
    out[ty, tx] = acc


def column_read(a, out):  # each thread reads its own row of a 32x32 tile: a column per warp step
    s = cuda.shared.array(1024, dtype=float32)
    t = cuda.threadIdx.x
    for k in range(32):
        s[k * 32 + t] = a[k * 32 + t]
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(32):
        acc += s[t * 32 + k]
    out[t] = acc


def float_atomic(a, out):  # per-block sums of 8 keys with float atomics on shared memory
    s = cuda.shared.array(8, dtype=float32)
    t = cuda.threadIdx.x
    if t < 8:
        s[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(s, t % 8, a[t])
    cuda.syncthreads()
    if t < 8:
        out[t] = s[t]


def reduce_interleaved(a, out):  # interleaved addressing (s[2*stride*t]): the classic conflicting tree
    s = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    stride = 1
    while stride < 256:
        i = 2 * stride * t
        if i < 256:
            s[i] += s[i + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[0] = s[0]


def matvec_shared(m, x, y):  # y = M x with x staged in shared memory, one row per thread
    xs = cuda.shared.array(64, dtype=float32)
    t = cuda.threadIdx.x
    xs[t] = x[t]
    cuda.syncthreads()
    acc = float32(0.0)
    for j in range(64):
        acc += m[t, j] * xs[j]
    y[t] = acc


def stencil_2d(a, out):  # 5-point 2D stencil on a 16x16 tile with a 1-cell border
    s = cuda.shared.array(shape=(18, 18), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty + 1, tx + 1] = a[ty + 1, tx + 1]
    if tx == 0:
        s[ty + 1, 0] = a[ty + 1, 0]
        s[ty + 1, 17] = a[ty + 1, 17]
    if ty == 0:
        s[0, tx + 1] = a[0, tx + 1]
        s[17, tx + 1] = a[17, tx + 1]
    cuda.syncthreads()
    out[ty, tx] = (
        s[ty + 1, tx + 1] * 4 - s[ty, tx + 1] - s[ty + 2, tx + 1] - s[ty + 1, tx] - s[ty + 1, tx + 2]
    )


def bitonic_sort(a, out):  # bitonic sort of 128 keys in shared memory
    s = cuda.shared.array(128, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    k = 2
    while k <= 128:
        j = k // 2
        while j > 0:
            p = t ^ j
            if p > t:
                up = (t & k) == 0
                if (s[t] > s[p]) == up:
                    tmp = s[t]
                    s[t] = s[p]
                    s[p] = tmp
            cuda.syncthreads()
            j //= 2
        k *= 2
    out[t] = s[t]


def xor_gather(a, out):  # each lane reads word t ^ 5 of its warp's row, then column 3 of a padded row
    s = cuda.shared.array(shape=(8, 33), dtype=float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = s[ty, tx ^ 5] + s[tx % 8, 3]


def bytes_shared(a, out):  # 8-bit shared words: four lanes share a bank word
    s = cuda.shared.array(1024, dtype=uint8)
    t = cuda.threadIdx.x
    for k in range(4):
        s[k * 256 + t] = a[k * 256 + t]
    cuda.syncthreads()
    out[t] = s[t * 4] + s[(t * 4 + 1) % 1024]


def doubles_shared(a, out):  # 8-byte shared words: two phases per warp
    s = cuda.shared.array(256, dtype=float64)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[(t * 2) % 256] + s[255 - t]


F2, F1, I1 = "float32[:,:]", "float32[:]", "int32[:]"
# name -> (function, signature, block, [(kind, ndim, shape, bytes)] for each argument)
KERNELS = {
    "matmul_shared": (matmul_shared, f"{F2}, {F2}, {F2}", [16, 16], [(2, (64, 64))] * 3),
    "transpose_tile": (transpose_tile, f"{F2}, {F2}", [32, 8], [(2, (32, 32))] * 2),
    "transpose_padded": (transpose_padded, f"{F2}, {F2}", [32, 8], [(2, (32, 32))] * 2),
    "reduce_tree": (reduce_tree, f"{F1}, {F1}", [256], [(1, (256,)), (1, (1,))]),
    "histogram_shared": (histogram_shared, f"{I1}, {I1}", [256], [(1, (256,)), (1, (256,))]),
    "stencil_halo": (stencil_halo, f"{F1}, {F1}", [128], [(1, (256,)), (1, (256,))]),
    "scan_hillis_steele": (scan_hillis_steele, f"{F1}, {F1}", [128], [(1, (128,)), (1, (128,))]),
    "conv_tile": (conv_tile, f"{F2}, {F2}, {F2}", [16, 16], [(2, (18, 18)), (2, (3, 3)), (2, (16, 16))]),
    "column_read": (column_read, f"{F1}, {F1}", [32], [(1, (1024,)), (1, (32,))]),
    "float_atomic": (float_atomic, f"{F1}, {F1}", [64], [(1, (64,)), (1, (8,))]),
    "reduce_interleaved": (reduce_interleaved, f"{F1}, {F1}", [256], [(1, (256,)), (1, (1,))]),
    "matvec_shared": (matvec_shared, f"{F2}, {F1}, {F1}", [64], [(2, (64, 64)), (1, (64,)), (1, (64,))]),
    "stencil_2d": (stencil_2d, f"{F2}, {F2}", [16, 16], [(2, (18, 18)), (2, (16, 16))]),
    "bitonic_sort": (bitonic_sort, f"{F1}, {F1}", [128], [(1, (128,)), (1, (128,))]),
    "xor_gather": (xor_gather, f"{F2}, {F2}", [32, 8], [(2, (8, 32)), (2, (8, 32))]),
    "bytes_shared": (bytes_shared, "uint8[:], int32[:]", [256], [(1, (1024,), 1), (1, (256,))]),
    "doubles_shared": (doubles_shared, "float64[:], float64[:]", [256], [(1, (256,), 8), (1, (256,), 8)]),
}


def case(name: str) -> str:
    """The [[case]] entry: each array's data pointer a buffer, its sizes and strides given."""
    _, _, block, arrays = KERNELS[name]
    args, buffers, pos = {}, {}, 0
    for ndim, shape, *size in arrays:
        item = size[0] if size else 4
        n = 1
        for d in shape:
            n *= d
        args[pos + 2], args[pos + 3] = n, item  # nitems, itemsize
        buffers[pos + 4] = max(4096, item * n)
        strides = [item * (n // shape[0]) if ndim == 2 else item, item][:ndim]
        for d in range(ndim):
            args[pos + 5 + d] = shape[d]
            args[pos + 5 + ndim + d] = strides[d]
        pos += 5 + 2 * ndim
    fmt = lambda m: "{ " + ", ".join(f'"{k}" = {v}' for k, v in m.items()) + " }"  # noqa: E731
    return (f'[[case]]\nname = "numba_{name}"\nsource = "numba_{name}.ptx"\nkernel = "{name}"\nblock = {block}\n'
            f"args = {fmt(args)}\nbuffers = {fmt(buffers)}\n")  # fmt: skip


def main(out: str) -> None:
    here = str(Path(__file__).resolve())
    for name, (fn, sig, _, _) in KERNELS.items():
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0), lineinfo=True)
        ptx = ptx.replace(f'"{here}"', '"lab/numba_kernels.py"')
        Path(out, f"numba_{name}.ptx").write_text(ptx)
        print(case(name))


if __name__ == "__main__":
    main(sys.argv[1])
