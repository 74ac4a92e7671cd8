// Sparse and ragged kernels whose trip counts and branches follow the offsets a launch loads:
// CSR SpMV with a warp per row (cuSPARSE/Merrill's "CSR-vector"), an embedding bag over offsets
// (PyTorch's EmbeddingBag sum), a segmented sum over head flags, and a softmax over ragged rows.

extern "C" __global__ void csr_spmv_vector(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* y, int rows) {
  __shared__ float partial[4][33];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int row = warp; row < rows; row += 4) {
    float s = 0.f;
    for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += 32) s += vals[j] * x[cols[j]];
    partial[warp][lane] = s;
    __syncwarp();
    for (int off = 16; off > 0; off >>= 1) {
      if (lane < off) partial[warp][lane] += partial[warp][lane + off];
      __syncwarp();
    }
    if (lane == 0) y[row] = partial[warp][0];
    __syncwarp();
  }
}

extern "C" __global__ void embedding_bag_sum(const int* __restrict__ indices, const int* __restrict__ offsets,
                                             const float* __restrict__ table, float* out, int dim) {
  __shared__ int idx[128];
  const int bag = blockIdx.x;
  const int begin = offsets[bag], end = offsets[bag + 1];
  float acc = 0.f;
  for (int base = begin; base < end; base += 128) {
    const int n = min(128, end - base);
    if (threadIdx.x < n) idx[threadIdx.x] = indices[base + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < n; ++j) acc += table[idx[j] * dim + threadIdx.x];  // a broadcast per j
    __syncthreads();
  }
  out[bag * dim + threadIdx.x] = acc;
}

extern "C" __global__ void segmented_sum(const float* __restrict__ x, const unsigned char* __restrict__ heads,
                                         float* out) {
  __shared__ float buf[256];
  __shared__ int flag[256];
  const int t = threadIdx.x;
  buf[t] = x[t];
  flag[t] = heads[t];
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {  // Hillis-Steele, stopping at segment heads
    float v = 0.f;
    int f = flag[t];
    if (t >= off && !f) {
      v = buf[t - off];
      f = flag[t - off];
    }
    __syncthreads();
    if (t >= off && !flag[t]) {
      buf[t] += v;
      flag[t] = f;
    }
    __syncthreads();
  }
  out[t] = buf[t];
}

extern "C" __global__ void ragged_softmax(const float* __restrict__ x, const int* __restrict__ lengths,
                                          float* y, int stride) {
  __shared__ float red[128];
  const int row = blockIdx.x, len = lengths[row];
  float m = -1e30f;
  for (int i = threadIdx.x; i < len; i += 128) m = fmaxf(m, x[row * stride + i]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int i = threadIdx.x; i < len; i += 128) sum += __expf(x[row * stride + i] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  for (int i = threadIdx.x; i < len; i += 128) y[row * stride + i] = __expf(x[row * stride + i] - m) / red[0];
}
