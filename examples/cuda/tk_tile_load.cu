// A ThunderKittens-style tile load (HazyResearch/ThunderKittens: kittens::load(st, gl) then
// kittens::load(rt, st)): a 64x64 bf16 shared tile with TK's 128-byte swizzle (st::idx: byte
// address ^ (((address >> 7) & 7) << 4) for 128-byte rows), filled with 16-byte global loads, then
// read by each of 4 warps as 16x16 register tiles with ldmatrix.x4 (TK's move<...>::ldsm4, inline
// PTX on a shared address from __cvta_generic_to_shared). SWIZZLE_BYTES=0 stores the rows plainly.
// Launch: 128 threads, arguments src (64x64 bf16), dst (per-thread fragments).
#ifndef SWIZZLE_BYTES
#define SWIZZLE_BYTES 128
#endif
#include <cuda_bf16.h>

__device__ __forceinline__ unsigned swizzle(unsigned byte) {
#if SWIZZLE_BYTES == 128
  return byte ^ (((byte >> 7) & 7) << 4);
#else
  return byte;
#endif
}

extern "C" __global__ void tk_load_tile(const __nv_bfloat16 *src, unsigned *dst)
{
  __shared__ alignas(1024) __nv_bfloat16 tile[64 * 64];
  char *base = reinterpret_cast<char *>(tile);
  // load(st, gl): 64 rows x 128 bytes = 512 chunks of 16 bytes, 4 per thread
  for (int i = threadIdx.x; i < 512; i += blockDim.x) {
    int row = i / 8, chunk = i % 8;
    uint4 v = reinterpret_cast<const uint4 *>(src)[row * 8 + chunk];
    *reinterpret_cast<uint4 *>(base + swizzle(row * 128 + chunk * 16)) = v;
  }
  __syncthreads();
  // load(rt, st): warp w reads rows 16w..16w+15, all 64 columns, as four 16x16 tiles
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned r[16];
  for (int t = 0; t < 4; ++t) {
    int row = warp * 16 + (lane % 16);
    int col_bytes = t * 32 + (lane / 16) * 16;
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(base + swizzle(row * 128 + col_bytes)));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[4 * t]), "=r"(r[4 * t + 1]), "=r"(r[4 * t + 2]), "=r"(r[4 * t + 3])
                 : "r"(addr));
  }
  for (int i = 0; i < 16; ++i) dst[threadIdx.x * 16 + i] = r[i];
}
