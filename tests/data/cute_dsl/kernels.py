"""CuTe DSL kernels for tests/test_front_end_cute_dsl.py (compiled to PTX on the CPU)."""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator


@cute.kernel
def transpose_kernel(g_a: cute.Tensor, g_b: cute.Tensor, row: cutlass.Constexpr):
    tx, ty, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    tile = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, 32), stride=(row, 1)), 16)
    tile[ty, tx] = g_a[ty, tx]
    cute.arch.sync_threads()
    g_b[ty, tx] = tile[tx, ty]


@cute.jit
def transpose(g_a: cute.Tensor, g_b: cute.Tensor, row: cutlass.Constexpr):
    transpose_kernel(g_a, g_b, row).launch(grid=(1, 1, 1), block=(32, 32, 1))
