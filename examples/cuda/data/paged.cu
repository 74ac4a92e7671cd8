// Attention-style kernels whose loops and gathers follow the sequence lengths, block tables and
// layouts a launch loads: a paged-KV decode step (vLLM's paged_attention: seq_lens and
// block_tables), a variable-length (cu_seqlens) tile transpose (FlashAttention's varlen batches),
// and a block-sparse tile loop (a layout mask picks the tiles, as in block-sparse attention).
typedef int int32_t;  // (NVRTC has no <cstdint> without the toolkit headers)
typedef unsigned char uint8_t;

#define HEAD 32
#define PAGE 16

extern "C" __global__ void paged_kv_decode(const float* __restrict__ q, const float* __restrict__ k_cache,
                                           const int* __restrict__ block_tables, const int* __restrict__ seq_lens,
                                           float* out, int max_blocks) {
  __shared__ float k_tile[PAGE][HEAD];  // one page of keys
  __shared__ float scores[PAGE * 64];
  const int seq = blockIdx.x;
  const int len = seq_lens[seq];
  const int lane = threadIdx.x % 32, row = threadIdx.x / 32;  // 4 warps: rows 0..3 of a page
  float qv = q[seq * HEAD + lane];
  for (int b = 0; b < (len + PAGE - 1) / PAGE; ++b) {
    const int page = block_tables[seq * max_blocks + b];
    for (int r = row; r < PAGE; r += 4) k_tile[r][lane] = k_cache[(page * PAGE + r) * HEAD + lane];
    __syncthreads();
    if (threadIdx.x < PAGE) {  // token threadIdx.x of the page: a dot product down its row
      float s = 0.f;
      for (int d = 0; d < HEAD; ++d) s += k_tile[threadIdx.x][d] * qv;
      if (b * PAGE + threadIdx.x < len) scores[b * PAGE + threadIdx.x] = s;
    }
    __syncthreads();
  }
  if (threadIdx.x < len && threadIdx.x < PAGE * 64) out[seq * 1024 + threadIdx.x] = scores[threadIdx.x];
}

extern "C" __global__ void varlen_tile_transpose(const float* __restrict__ x, const int* __restrict__ cu_seqlens,
                                                 float* y, int cols) {
  __shared__ float tile[32][32];
  const int b = blockIdx.x;
  const int start = cu_seqlens[b], end = cu_seqlens[b + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  for (int r0 = start; r0 < end; r0 += 32) {
    for (int j = ty; j < 32; j += 8) tile[j][tx] = (r0 + j < end) ? x[(r0 + j) * cols + tx] : 0.f;
    __syncthreads();
    for (int j = ty; j < 32; j += 8) y[tx * 4096 + r0 + j] = tile[tx][j];
    __syncthreads();
  }
}

extern "C" __global__ void block_sparse_tiles(const float* __restrict__ x, const uint8_t* __restrict__ layout,
                                              float* y, int tiles) {
  __shared__ float a[32][33];
  __shared__ float b[32][32];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  float acc = 0.f;
  for (int t = 0; t < tiles; ++t) {
    if (!layout[blockIdx.x * tiles + t]) continue;  // the mask says which tiles are computed
    for (int j = ty; j < 32; j += 8) {
      a[j][tx] = x[(t * 32 + j) * 32 + tx];
      b[j][tx] = x[(t * 32 + j) * 32 + tx] * 2.f;
    }
    __syncthreads();
    for (int k = 0; k < 32; ++k) acc += a[ty][k] * b[tx][k];  // b read down a column: 32-way
    __syncthreads();
  }
  y[ty * 32 + tx] = acc;
}
