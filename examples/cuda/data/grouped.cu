// A grouped GEMM's tile loop (CUTLASS's grouped GEMM and Triton's tutorial: each group's problem
// size is loaded, and the CTA walks the tiles of every group): 32x32 tiles through shared memory,
// the K loop's trip count the group's K.
extern "C" __global__ void grouped_gemm_tiles(const int* __restrict__ sizes, const float* __restrict__ a,
                                              const float* __restrict__ b, float* c, int groups) {
  __shared__ float as[32][32];
  __shared__ float bs[32][33];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  for (int g = 0; g < groups; ++g) {
    const int m = sizes[3 * g], n = sizes[3 * g + 1], k = sizes[3 * g + 2];
    for (int tm = 0; tm < m; tm += 32) {
      for (int tn = 0; tn < n; tn += 32) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        for (int tk = 0; tk < k; tk += 32) {
          for (int j = 0; j < 4; ++j) {
            as[ty + 8 * j][tx] = a[(tm + ty + 8 * j) * 64 + tk + tx];
            bs[ty + 8 * j][tx] = b[(tk + ty + 8 * j) * 64 + tn + tx];
          }
          __syncthreads();
#pragma unroll 1
          for (int kk = 0; kk < 32; ++kk)
            for (int j = 0; j < 4; ++j) acc[j] += as[ty + 8 * j][kk] * bs[kk][tx];
          __syncthreads();
        }
        for (int j = 0; j < 4; ++j) c[(tm + ty + 8 * j) * 64 + tn + tx] = acc[j];
      }
    }
  }
}
