"""numba-cuda kernels for tests/test_front_end_numba.py (compiled to PTX on the CPU)."""

from numba import cuda, float32


@cuda.jit(lineinfo=True)
def transpose(a, b):
    tile = cuda.shared.array((32, 32), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    b[ty, tx] = tile[tx, ty]


@cuda.jit(lineinfo=True)
def transpose_padded(a, b):
    tile = cuda.shared.array((32, 33), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    b[ty, tx] = tile[tx, ty]
