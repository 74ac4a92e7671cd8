// Shared-memory tiled matrix multiplication from the CUDA C++ Programming Guide (section "Shared
// Memory": MatMulKernel with BLOCK_SIZE x BLOCK_SIZE sub-matrices As and Bs), and a float4
// vectorized 32x32 transpose whose 128-bit stores and loads exercise quarter-warp phases.
// Launch: matmul 16x16 threads, arguments A, B, C, n; transpose_vec4 32x8 threads, arguments
// out, in, n.
#define BLOCK_SIZE 16

extern "C" __global__ void matmul_shared(const float *A, const float *B, float *C, int n)
{
  __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
  __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
  int row = blockIdx.y * BLOCK_SIZE + threadIdx.y, col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  float c = 0.f;
  for (int m = 0; m < n / BLOCK_SIZE; ++m) {
    As[threadIdx.y][threadIdx.x] = A[row * n + m * BLOCK_SIZE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(m * BLOCK_SIZE + threadIdx.y) * n + col];
    __syncthreads();
    for (int e = 0; e < BLOCK_SIZE; ++e) c += As[threadIdx.y][e] * Bs[e][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = c;
}

extern "C" __global__ void transpose_vec4(float *out, const float *in, int n)
{
  __shared__ float4 tile[32][8];  // 32 rows of 32 floats, as float4
  int r = threadIdx.y * 4, c4 = threadIdx.x % 8, rr = threadIdx.x / 8;
  tile[r + rr][c4] = reinterpret_cast<const float4 *>(in)[(r + rr) * (n / 4) + c4];
  __syncthreads();
  float4 v = tile[(threadIdx.x % 8) * 4 + threadIdx.y % 4][threadIdx.x / 8 + 4 * (threadIdx.y / 4)];
  reinterpret_cast<float4 *>(out)[threadIdx.y * 32 + threadIdx.x] = v;
}

extern "C" __global__ void histogram_shared(const unsigned char *data, unsigned *bins, int n)
{
  __shared__ unsigned h[256];
  h[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&h[data[i]], 1u);
  __syncthreads();
  atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}
