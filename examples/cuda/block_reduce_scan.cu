// Block-wide reduction and scan with CUB (CCCL's cub::BlockReduce and cub::BlockScan, the
// library's own code: https://github.com/NVIDIA/cccl, cub/block/block_reduce.cuh and
// block_scan.cuh), and the classic shared-memory tree reduction of NVIDIA's "Optimizing Parallel
// Reduction in CUDA" (Mark Harris), kernel 1 (interleaved addressing, strided index: the
// bank-conflicting one) and kernel 3 (sequential addressing). Launch: 256 threads per block.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

extern "C" __global__ void cub_block_reduce(const int *in, int *out)
{
  using BlockReduce = cub::BlockReduce<int, 256>;
  __shared__ typename BlockReduce::TempStorage temp;
  int v = in[blockIdx.x * 256 + threadIdx.x];
  int sum = BlockReduce(temp).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

extern "C" __global__ void cub_block_scan(const int *in, int *out)
{
  using BlockScan = cub::BlockScan<int, 256>;
  __shared__ typename BlockScan::TempStorage temp;
  int v = in[blockIdx.x * 256 + threadIdx.x];
  int r;
  BlockScan(temp).ExclusiveSum(v, r);
  out[blockIdx.x * 256 + threadIdx.x] = r;
}

extern "C" __global__ void reduce_interleaved(const int *in, int *out)
{
  __shared__ int sdata[256];
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
  for (unsigned s = 1; s < 256; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < 256) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void reduce_sequential(const int *in, int *out)
{
  __shared__ int sdata[256];
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
