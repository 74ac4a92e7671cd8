// A FlashAttention-2-style forward pass in the manner of flash-attention-minimal
// (github.com/tspeterkim/flash-attention-minimal, flash.cu): Q, K, V tiles staged in shared memory,
// one query row per thread, online softmax, with FlashAttention-2's loop order (a CTA owns one
// block of queries and walks every key/value block). The score loop reads Q[tx][x] from shared
// memory with a row stride of D floats: lanes 32 rows apart hit one bank. PAD=1 pads each row by one
// float. Launch: 32 threads (BR), grid (N / BR, heads); arguments Q, K, V, O, N, scale (bits).
#ifndef D
#define D 64
#endif
#ifndef PAD
#define PAD 0
#endif
#define BR 32
#define BC 32
#define LD (D + PAD)

extern "C" __global__ void fa2_forward(const float *Q, const float *K, const float *V, float *O, int N, float scale)
{
  extern __shared__ float sram[];
  float *Qi = sram;             // BR x LD
  float *Kj = Qi + BR * LD;     // BC x LD
  float *Vj = Kj + BC * LD;     // BC x LD
  int tx = threadIdx.x;
  size_t head = (size_t)blockIdx.y * N * D;
  int q = blockIdx.x * BR + tx;
  for (int x = 0; x < D; ++x) Qi[tx * LD + x] = Q[head + (size_t)q * D + x];
  float m = -1e30f, l = 0.f, acc[D];
  for (int x = 0; x < D; ++x) acc[x] = 0.f;
  int tc = (N + BC - 1) / BC;
  for (int j = 0; j < tc; ++j) {
    __syncthreads();
    for (int x = 0; x < D; ++x) {
      Kj[tx * LD + x] = K[head + (size_t)(j * BC + tx) * D + x];
      Vj[tx * LD + x] = V[head + (size_t)(j * BC + tx) * D + x];
    }
    __syncthreads();
    float s[BC], mj = m;
    for (int y = 0; y < BC; ++y) {
      float dot = 0.f;
      for (int x = 0; x < D; ++x) dot += Qi[tx * LD + x] * Kj[y * LD + x];
      s[y] = dot * scale;
      mj = fmaxf(mj, s[y]);
    }
    float corr = __expf(m - mj), lj = l * corr;
    for (int x = 0; x < D; ++x) acc[x] *= corr;
    for (int y = 0; y < BC; ++y) {
      float p = __expf(s[y] - mj);
      lj += p;
      for (int x = 0; x < D; ++x) acc[x] += p * Vj[y * LD + x];
    }
    m = mj;
    l = lj;
  }
  for (int x = 0; x < D; ++x) O[head + (size_t)q * D + x] = acc[x] / l;
}
