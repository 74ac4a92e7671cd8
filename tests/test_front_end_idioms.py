"""What front ends' PTX writes that the reader must take exactly (issue: every front end's kernels):
``WARP_SZ``, the PTX ISA's predefined constant for the warp size, which nvcc and NVRTC write for
CUDA's ``warpSize``; it is 32 on every NVIDIA GPU."""

from __future__ import annotations

import pytest

import bankproof
from tests import kernel_cases as kc

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
  .reg .b32 %r<8>;
  .shared .align 4 .b8 buf[1024];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, WARP_SZ;
  rem.u32 %r3, %r1, %r2;
  shl.b32 %r4, %r3, 5;
  mov.u32 %r5, buf;
  add.s32 %r6, %r5, %r4;
  st.shared.u32 [%r6], %r1;
  ret;
}
"""


def test_warp_sz_is_the_warp_size():
    """``tid % WARP_SZ`` is the lane: 32-byte strides put 8 lanes on each of 4 banks: 8 wavefronts
    (unknown before: the constant was not read)."""
    r = bankproof.kernel(PTX, block=32, language="ptx")
    (st,) = [t for t in r.totals if t.kind == "st"]
    assert (r.verdict, st.instructions, st.wavefronts, st.ideal) == ("refuted", 1, 8, 1)


def test_warpsize_in_cuda_source():
    """CUDA's ``warpSize`` through NVRTC: the store of ``warp * warpSize + lane`` conflict-free, the
    transposed load 8-way (8 warps of 256 threads)."""
    if not kc.have_nvrtc():
        pytest.skip("NVRTC is the cuda extra")
    src = """extern "C" __global__ void wsum(const float* __restrict__ x, float* out) {
  __shared__ float buf[256];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  buf[warp * warpSize + lane] = x[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[lane * 8 + warp];
}"""
    r = bankproof.kernel(src, block=256, language="cuda")
    got = {t.kind: (t.instructions, t.wavefronts, t.ideal) for t in r.totals}
    assert got == {"st": (8, 8, 8), "ld": (8, 64, 8)}
