// An sm90 stmatrix epilogue as CUTLASS writes one: each warp stores its 16x64 half of the
// accumulator tile (the SM80/SM90 MMA C fragment: rows lane/4 and lane/4 + 8, columns 2(lane%4))
// with stmatrix.x4 (CuTe's SM90_U32x4_STSM_N, cute/arch/copy_sm90.hpp: stmatrix.sync.aligned.x4.m8n8
// .shared.b16), into a 64x64 half tile in the 128-byte swizzle (Sw<3,4,3> on bytes, the layout a TMA
// store reads), then the tile is copied out with 128-bit loads. SWIZZLE=0 stores rows plainly (8-way
// conflicts: every matrix's 8 rows are 128 bytes apart). Launch: 128 threads; argument out.
#ifndef SWIZZLE
#define SWIZZLE 1
#endif
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned sw(unsigned byte) {
#if SWIZZLE
  return byte ^ (((byte >> 7) & 7) << 4);
#else
  return byte;
#endif
}

extern "C" __global__ void stsm_epilogue(uint4 *out)
{
  __shared__ alignas(1024) __half tile[64 * 64];
  unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int t = 0; t < 4; ++t) {  // 16 columns (32 bytes) per stmatrix.x4
    unsigned r[4];
    for (int i = 0; i < 4; ++i) {
      __half2 v = __floats2half2_rn(float(threadIdx.x), float(16 * t + 4 * i));
      r[i] = *reinterpret_cast<unsigned *>(&v);
    }
    int row = 16 * w + (lane % 8) + 8 * ((lane / 8) % 2);
    int col_bytes = 32 * t + 16 * (lane / 16);
    unsigned addr = base + sw(row * 128 + col_bytes);
    asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 512; i += 128) {
    int row = i / 8, chunk = i % 8;
    out[i] = *reinterpret_cast<const uint4 *>(reinterpret_cast<const char *>(tile) + sw(row * 128 + chunk * 16));
  }
}
