// Kernels whose shared-memory addresses are the keys' (or ranks'): CUB's block radix sort and
// block histograms (cub/block/*.cuh from the toolkit's CCCL: the library kernels use, in thin
// wrappers), a counting-sort scatter by key, and a gather of tile rows by an index buffer.
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

extern "C" __global__ void cub_block_radix_sort(const unsigned* __restrict__ keys_in, unsigned* keys_out) {
  using Sort = cub::BlockRadixSort<unsigned, 128, 4>;
  __shared__ typename Sort::TempStorage temp;
  unsigned keys[4];
  cub::LoadDirectStriped<128>(threadIdx.x, keys_in, keys);
  Sort(temp).Sort(keys);
  cub::StoreDirectStriped<128>(threadIdx.x, keys_out, keys);
}

extern "C" __global__ void cub_histogram_atomic(const unsigned char* __restrict__ samples, unsigned* hist_out) {
  using Hist = cub::BlockHistogram<unsigned char, 128, 4, 256, cub::BLOCK_HISTO_ATOMIC>;
  __shared__ typename Hist::TempStorage temp;
  __shared__ unsigned hist[256];
  unsigned char items[4];
  cub::LoadDirectStriped<128>(threadIdx.x, samples, items);
  Hist(temp).Histogram(items, hist);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += 128) hist_out[b] = hist[b];
}

extern "C" __global__ void cub_histogram_sort(const unsigned char* __restrict__ samples, unsigned* hist_out) {
  using Hist = cub::BlockHistogram<unsigned char, 128, 4, 256, cub::BLOCK_HISTO_SORT>;
  __shared__ typename Hist::TempStorage temp;
  __shared__ unsigned hist[256];
  unsigned char items[4];
  cub::LoadDirectStriped<128>(threadIdx.x, samples, items);
  Hist(temp).Histogram(items, hist);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += 128) hist_out[b] = hist[b];
}

extern "C" __global__ void counting_scatter(const unsigned* __restrict__ keys, unsigned* out) {
  __shared__ unsigned count[32];
  __shared__ unsigned start[32];
  __shared__ unsigned sorted[256];
  const int t = threadIdx.x;  // 256 threads, one key each; keys in 0..31
  if (t < 32) count[t] = 0;
  __syncthreads();
  const unsigned k = keys[t] & 31;
  const unsigned mine = atomicAdd(&count[k], 1u);
  __syncthreads();
  if (t == 0) {
    unsigned s = 0;
    for (int b = 0; b < 32; ++b) {
      start[b] = s;
      s += count[b];
    }
  }
  __syncthreads();
  sorted[start[k] + mine] = keys[t];  // where each key lands: its bucket's start and its rank
  __syncthreads();
  out[t] = sorted[t];
}

extern "C" __global__ void gather_rows(const float* __restrict__ x, const int* __restrict__ perm, float* y) {
  __shared__ float tile[32][32];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  for (int j = ty; j < 32; j += 8) tile[j][tx] = x[j * 32 + tx];
  __syncthreads();
  for (int j = ty; j < 32; j += 8) y[j * 32 + tx] = tile[perm[j * 32 + tx] & 31][tx];  // lanes pick rows
}
