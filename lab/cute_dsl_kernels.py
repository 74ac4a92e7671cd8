"""Eight CuTe DSL kernels of the shapes the DSL's examples teach (a tile staged through shared
memory in a CuTe layout: row-major, padded, swizzled with ``make_composed_layout``, column-major,
16- and 64-bit elements, a tree reduction, a halo stencil), written here, compiled to PTX by the
DSL's own compiler on the CPU (nvidia-cutlass-dsl 4.8.1, ``--gpu-arch=sm_90a
--generate-line-info``) and kept as PTX: examples/cuda/cute_dsl/*.ptx, their [[case]] entries in
examples/cuda/cute_dsl/cases.toml (each tensor a pointer parameter; layouts are static).

    python -m lab.cute_dsl_kernels examples/cuda/cute_dsl     # writes the PTX
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402
from cutlass.memory import SmemAllocator  # noqa: E402


@cute.kernel
def stage_kernel(g_a: cute.Tensor, g_b: cute.Tensor, dtype: cutlass.Constexpr, smem_layout: cutlass.Constexpr,
                 swz: cutlass.Constexpr):  # fmt: skip
    """Each thread writes row ty, column tx of a 32x32 tile and reads it back transposed."""
    tx, ty, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    layout = cute.make_layout((32, 32), stride=smem_layout)
    if cutlass.const_expr(swz is not None):
        layout = cute.make_composed_layout(cute.make_swizzle(*swz), 0, layout)
    tile = smem.allocate_tensor(dtype, layout, 16)
    for j in cutlass.range_constexpr(0, 32, 8):
        tile[ty + j, tx] = g_a[ty + j, tx]
    cute.arch.sync_threads()
    for j in cutlass.range_constexpr(0, 32, 8):
        g_b[ty + j, tx] = tile[tx, ty + j]


@cute.jit
def stage(g_a: cute.Tensor, g_b: cute.Tensor, dtype: cutlass.Constexpr, smem_layout: cutlass.Constexpr,
          swz: cutlass.Constexpr):  # fmt: skip
    stage_kernel(g_a, g_b, dtype, smem_layout, swz).launch(grid=(1, 1, 1), block=(32, 8, 1))


@cute.kernel
def reduce_kernel(g_a: cute.Tensor, g_b: cute.Tensor):
    """A 256-float tree reduction through shared memory (the sum in element 0)."""
    tx, _, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout(256), 16)
    buf[tx] = g_a[tx]
    cute.arch.sync_threads()
    for k in cutlass.range_constexpr(7, -1, -1):
        if tx < (1 << k):
            buf[tx] = buf[tx] + buf[tx + (1 << k)]
        cute.arch.sync_threads()
    if tx == 0:
        g_b[0] = buf[0]


@cute.jit
def reduce(g_a: cute.Tensor, g_b: cute.Tensor):
    reduce_kernel(g_a, g_b).launch(grid=(1, 1, 1), block=(256, 1, 1))


@cute.kernel
def stencil_kernel(g_a: cute.Tensor, g_b: cute.Tensor):
    """A 1-D three-point stencil over 256 floats with a halo of one on each side."""
    tx, _, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout(258), 16)
    buf[tx + 1] = g_a[tx + 1]
    if tx == 0:
        buf[0] = g_a[0]
        buf[257] = g_a[257]
    cute.arch.sync_threads()
    g_b[tx] = buf[tx] + buf[tx + 1] + buf[tx + 2]


@cute.jit
def stencil(g_a: cute.Tensor, g_b: cute.Tensor):
    stencil_kernel(g_a, g_b).launch(grid=(1, 1, 1), block=(256, 1, 1))


def _fake(dtype, shape, stride):
    return make_fake_tensor(dtype, shape, stride=stride)


F32, F16, F64 = cutlass.Float32, cutlass.Float16, cutlass.Float64
SQ = {t: (lambda t=t: _fake(t, (32, 32), (32, 1))) for t in (F32, F16, F64)}
KERNELS = {  # name -> (jit function, its arguments)
    "cute_dsl_transpose_rowmajor": (stage, lambda: (SQ[F32](), SQ[F32](), F32, (32, 1), None)),
    "cute_dsl_transpose_padded": (stage, lambda: (SQ[F32](), SQ[F32](), F32, (33, 1), None)),
    "cute_dsl_transpose_swizzled": (stage, lambda: (SQ[F32](), SQ[F32](), F32, (32, 1), (5, 0, 5))),
    "cute_dsl_transpose_colmajor": (stage, lambda: (SQ[F32](), SQ[F32](), F32, (1, 32), None)),
    "cute_dsl_transpose_f16": (stage, lambda: (SQ[F16](), SQ[F16](), F16, (32, 1), None)),
    "cute_dsl_transpose_f64": (stage, lambda: (SQ[F64](), SQ[F64](), F64, (32, 1), None)),
    "cute_dsl_reduce_tree": (reduce, lambda: (_fake(F32, (256,), (1,)), _fake(F32, (1,), (1,)))),
    "cute_dsl_stencil_halo": (stencil, lambda: (_fake(F32, (258,), (1,)), _fake(F32, (256,), (1,)))),
}


def ptx_of(fn, args) -> str:
    with tempfile.TemporaryDirectory() as d:
        flags = f"--keep-ptx --dump-dir={d} --gpu-arch=sm_90a --generate-line-info"
        return cute.compile(fn, *args, options=flags).artifacts.PTX


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, (fn, args) in KERNELS.items():
        (out / f"{name}.ptx").write_text(ptx_of(fn, args()))
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
