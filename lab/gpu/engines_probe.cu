// bankproof lab: what the Hopper engines do with shared-memory bytes (lab/gpu/engines.py drives it).
//
// Each input line is one probe; each prints one JSON line.
//   tma  EB MODE BASE BOXB GOFF           TMA (cp.async.bulk.tensor.2d) loads a 16-row box of EB-byte
//                                         elements, BOXB bytes wide, swizzle MODE (CUtensorMapSwizzle
//                                         0-3), into the 1024-aligned window + BASE; the global tensor
//                                         starts GOFF bytes into a 256-aligned allocation (row pitch
//                                         256 B). Prints where each global byte of the box landed.
//   gmma DT OPND MAJOR SWZ START BOFF LBO SBO
//                                         one wgmma m64n32 (K = 32 bytes of DT: f16 k16, tf32 k8, s8 k32)
//                                         reads operand OPND (A or B) through a descriptor (sm90 layout
//                                         type SWZ, start = window + START, base offset field BOFF,
//                                         LBO/SBO in bytes); the other operand is a one-hot selector,
//                                         so D reveals which shared slot each (row, k) read. Shared
//                                         slots hold their own index (7 bits a pass, 3 passes).
//   tmagmma MODE BASE BOFF KSTEP MAJOR    TMA writes a 16-bit 32-row box (span-wide rows, MODE) at
//                                         window + BASE, wgmma reads it as operand B (N = 32) with the
//                                         matching descriptor at K step KSTEP: the global element each
//                                         (n, k) received.
//   tmastore EB MODE BASE BOXB            a TMA store (cp.async.bulk.tensor global <- shared) of a 16-row
//                                         box from window + BASE: which shared byte each global byte of
//                                         the box came from (the window holds its own byte offsets).
//   ldsm MODE BASE XOR                    TMA writes a 16-bit 16-row box (MODE) at window + BASE, then
//                                         ldmatrix.x4 reads rows 0-15, 16-byte chunks 0-1, with the
//                                         mode's XOR computed from the absolute address (XOR = abs) or
//                                         from the offset in the buffer (XOR = rel): the global element
//                                         each (row, col) received.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define WIN 32768    // the window of shared memory the probes fill and read
#define SEL 2048     // the selector operand, after the window
#define DYN (1024 + WIN + SEL)

static void fail(const char* what, const char* why) {
  printf("{\"error\": \"%s\", \"at\": \"%s\"}\n", why, what);
  fflush(stdout);
  exit(3);
}
#define CK(x)                                                  \
  do {                                                         \
    cudaError_t e_ = (x);                                      \
    if (e_ != cudaSuccess) fail(#x, cudaGetErrorString(e_));   \
  } while (0)

__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

extern __shared__ uint8_t dyn[];

__device__ __forceinline__ uint8_t* window(uint32_t* w0) {
  uint32_t s0 = sa(dyn);
  *w0 = (s0 + 1023u) & ~1023u;
  return dyn + (*w0 - s0);
}

// Waits for the mbarrier's phase 0; gives up after a bound (a faulting copy must not hang the probe).
__device__ __forceinline__ int wait_bar(uint32_t bar) {
  for (int i = 0; i < 2000000; ++i) {
    uint32_t done;
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar) : "memory");
    if (done) return 1;
  }
  return 0;
}

// One TMA load of the box at (0, 0) into shared address dst; every thread returns once it landed.
__device__ int tma_load(const CUtensorMap* map, uint32_t dst, uint32_t bytes, uint64_t* mbar) {
  uint32_t bar = sa(mbar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(dst), "l"(map), "r"(0), "r"(0), "r"(bar) : "memory");
  }
  int ok = wait_bar(bar);
  __syncthreads();
  return ok;
}

__global__ void k_tma(const __grid_constant__ CUtensorMap map, int base, uint32_t bytes, uint8_t* out,
                      uint32_t* info) {
  __shared__ __align__(8) uint64_t mbar;
  uint32_t w0;
  uint8_t* win = window(&w0);
  for (int i = threadIdx.x; i < WIN; i += blockDim.x) win[i] = 0xAB;
  int ok = tma_load(&map, w0 + base, bytes, &mbar);
  for (int i = threadIdx.x; i < WIN; i += blockDim.x) out[i] = win[i];
  if (threadIdx.x == 0) { info[0] = w0; info[1] = ok; }
}

__global__ void k_tmastore(const __grid_constant__ CUtensorMap map, int base, int pass, uint32_t* info) {
  uint32_t w0;
  uint8_t* win = window(&w0);
  for (int i = threadIdx.x; i < WIN; i += blockDim.x) win[i] = (uint8_t)(i >> (8 * pass));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&map), "r"(0), "r"(0), "r"(w0 + base) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    info[0] = w0;
  }
}

// ---- wgmma ---------------------------------------------------------------------------------------

__device__ __forceinline__ uint64_t desc(uint32_t start, uint32_t lbo, uint32_t sbo, uint32_t boff, uint32_t swz) {
  return (uint64_t)((start & 0x3FFFF) >> 4) | (uint64_t)((lbo & 0x3FFFF) >> 4) << 16 |
         (uint64_t)((sbo & 0x3FFFF) >> 4) << 32 | (uint64_t)(boff & 7) << 49 | (uint64_t)(swz & 3) << 62;
}

// dtypes: 0 f16, 1 tf32, 2 s8. K elements per 32 bytes.
__host__ __device__ inline int kdim(int dt) { return dt == 0 ? 16 : dt == 1 ? 8 : 32; }
__host__ __device__ inline int ebytes(int dt) { return dt == 0 ? 2 : dt == 1 ? 4 : 1; }

// Writes value v into element slot i (slot = byte address / element bytes, from the window start).
__device__ __forceinline__ void put(uint8_t* p, int dt, int i, int v) {
  if (dt == 0) ((__half*)p)[i] = __int2half_rn(v);
  else if (dt == 1) ((float*)p)[i] = (float)v;
  else ((int8_t*)p)[i] = (int8_t)v;
}

// The selector A fragment: A[m][k] = (k == m % K), in wgmma's register layout (warp w holds rows
// 16w..16w+15; per thread g = lane / 4, t = lane % 4).
__device__ void sel_a(int dt, uint32_t a[4]) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3, K = kdim(dt);
  for (int r = 0; r < 4; ++r) {
    int row = 16 * w + g + ((r & 1) ? 8 : 0);
    if (dt == 0) {  // halves (2 per reg): reg r: rows +8 if r odd, cols +8 if r >= 2
      int c0 = t * 2 + ((r >= 2) ? 8 : 0);
      __half lo = __int2half_rn((c0 == row % K) ? 1 : 0), hi = __int2half_rn((c0 + 1 == row % K) ? 1 : 0);
      a[r] = (uint32_t)__half_as_ushort(lo) | (uint32_t)__half_as_ushort(hi) << 16;
    } else if (dt == 1) {  // tf32: reg r: rows +8 if r odd, col t (+4 if r >= 2)
      int c = t + ((r >= 2) ? 4 : 0);
      a[r] = __float_as_uint((c == row % K) ? 1.0f : 0.0f);
    } else {  // s8 (4 per reg): cols t*4 + j (+16 if r >= 2)
      uint32_t v = 0;
      for (int j = 0; j < 4; ++j) v |= (uint32_t)((t * 4 + j + ((r >= 2) ? 16 : 0)) == row % K) << (8 * j);
      a[r] = v;
    }
  }
}

#define D16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define OUTF(d) "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]), \
    "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15])
#define OUTR(d) "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]), \
    "=r"(d[8]), "=r"(d[9]), "=r"(d[10]), "=r"(d[11]), "=r"(d[12]), "=r"(d[13]), "=r"(d[14]), "=r"(d[15])
#define PRED "{ .reg .pred p; setp.ne.b32 p, %22, 0; "

// D = A * B for one m64n32 wgmma; A from registers (a_desc == 0) or a descriptor.
__device__ void mma(int dt, int tna, int tnb, const uint32_t a[4], uint64_t a_desc, uint64_t b_desc, float d[16]) {
  int z = 0;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if (dt == 0 && !a_desc) {
    if (tnb)
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " D16 ", {%16,%17,%18,%19}, %20, p, 1, 1, 1; }"
                   : OUTF(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(0), "r"(z) : "memory");
    else
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " D16 ", {%16,%17,%18,%19}, %20, p, 1, 1, 0; }"
                   : OUTF(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(0), "r"(z) : "memory");
  } else if (dt == 0) {
    if (tna)
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " D16 ", %16, %20, p, 1, 1, 1, 0; }"
                   : OUTF(d) : "l"(a_desc), "n"(0), "n"(0), "n"(0), "l"(b_desc), "n"(0), "r"(z) : "memory");
    else
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " D16 ", %16, %20, p, 1, 1, 0, 0; }"
                   : OUTF(d) : "l"(a_desc), "n"(0), "n"(0), "n"(0), "l"(b_desc), "n"(0), "r"(z) : "memory");
  } else if (dt == 1 && !a_desc) {
    asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 " D16 ", {%16,%17,%18,%19}, %20, p, 1, 1; }"
                 : OUTF(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(0), "r"(z) : "memory");
  } else if (dt == 1) {
    asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 " D16 ", %16, %20, p, 1, 1; }"
                 : OUTF(d) : "l"(a_desc), "n"(0), "n"(0), "n"(0), "l"(b_desc), "n"(0), "r"(z) : "memory");
  } else {
    int* di = (int*)d;
    if (!a_desc)
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 " D16 ", {%16,%17,%18,%19}, %20, p; }"
                   : OUTR(di) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(0), "r"(z) : "memory");
    else
      asm volatile(PRED "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 " D16 ", %16, %20, p; }"
                   : OUTR(di) : "l"(a_desc), "n"(0), "n"(0), "n"(0), "l"(b_desc), "n"(0), "r"(z) : "memory");
    for (int i = 0; i < 16; ++i) d[i] = (float)di[i];
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

// Stores D (64 x 32) row-major to out, from wgmma's accumulator layout.
__device__ void store_d(const float d[16], float* out) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 16; ++i) {
    int row = 16 * w + g + 8 * ((i >> 1) & 1), col = (i >> 2) * 8 + t * 2 + (i & 1);
    out[row * 32 + col] = d[i];
  }
}

// The selector B (N = 32 rows, K-major, no swizzle: core matrices of 8 rows x 16 B contiguous, LBO
// 128 between the two 16-byte K halves, SBO 256 between 8-row groups): B[n][k] = (k == n % K).
__device__ void put_sel_b(uint8_t* sel, int dt) {
  int K = kdim(dt), eb = ebytes(dt), T = 16 / eb;
  for (int i = threadIdx.x; i < 32 * K; i += blockDim.x) {
    int n = i / K, k = i % K;
    int byte = (n % 8) * 16 + (n / 8) * 256 + (k / T) * 128 + (k % T) * eb;
    put(sel, dt, byte / eb, k == n % K ? 1 : 0);
  }
}

__global__ void k_gmma(int dt, int opnd, int major, int swz, int start, int boff, int lbo, int sbo, int pass,
                       float* out, uint32_t* info) {
  uint32_t w0;
  uint8_t* win = window(&w0);
  int eb = ebytes(dt);
  for (int i = threadIdx.x; i < WIN / eb; i += blockDim.x) put(win, dt, i, (i >> (7 * pass)) & 0x7F);
  uint8_t* sel = win + WIN;
  if (opnd == 0) put_sel_b(sel, dt);
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint32_t a[4] = {0, 0, 0, 0};
  uint64_t d_test = desc(w0 + start, lbo, sbo, boff, swz);
  float d[16];
  if (opnd == 1) {  // B under test
    sel_a(dt, a);
    mma(dt, 0, major, a, 0, d_test, d);
  } else {  // A under test, B the selector
    mma(dt, major, 0, a, d_test, desc(w0 + WIN, 128, 256, 0, 0), d);
  }
  store_d(d, out);
  if (threadIdx.x == 0) info[0] = w0;
}

// TMA writes a 16-bit box, then wgmma reads it as B through the mode's descriptor; D reveals the
// global element (ids 7 bits a pass, from the host's fill).
__global__ void k_tmagmma(const __grid_constant__ CUtensorMap map, int base, uint32_t bytes, int swz, int boff,
                          int kstep, int major, int span, float* out, uint32_t* info) {
  __shared__ __align__(8) uint64_t mbar;
  uint32_t w0;
  uint8_t* win = window(&w0);
  for (int i = threadIdx.x; i < WIN / 2; i += blockDim.x) put(win, 0, i, 0);
  int ok = tma_load(&map, w0 + base, bytes, &mbar);
  uint32_t a[4];
  sel_a(0, a);
  uint32_t start, lbo, sbo;
  if (major == 0) { start = w0 + base + 32 * kstep; lbo = 16; sbo = 8 * span; }
  else { start = w0 + base + 16 * span * kstep; lbo = 8 * 2 * span; sbo = 8 * span; }
  // MN-major (rows of the box are K, span bytes along N): one K step is 16 rows; LBO jumps between
  // span-wide N panels (none here: N = 32 halves = 64 B fits a 64/128B span; for 32B the next
  // panel is the next 16-row block), SBO between 8-row groups of K.
  float d[16];
  mma(0, 0, major, a, 0, desc(start, lbo, sbo, boff, swz), d);
  store_d(d, out);
  if (threadIdx.x == 0) { info[0] = w0; info[1] = ok; }
}

// TMA writes a 16-bit box, ldmatrix.x4 reads rows 0-15 x chunks 0-1 with a computed XOR.
__global__ void k_ldsm(const __grid_constant__ CUtensorMap map, int base, uint32_t bytes, int bbits, int rel,
                       uint32_t* out, uint32_t* info) {
  __shared__ __align__(8) uint64_t mbar;
  uint32_t w0;
  uint8_t* win = window(&w0);
  for (int i = threadIdx.x; i < WIN / 2; i += blockDim.x) put(win, 0, i, 0);
  int ok = tma_load(&map, w0 + base, bytes, &mbar);
  if (threadIdx.x < 32) {
    int lane = threadIdx.x, m = lane >> 3, row = (m & 1) * 8 + (lane & 7), chunk = m >> 1;
    uint32_t buf = w0 + base, off = row * (16u << bbits) + chunk * 16, mask = ((1u << bbits) - 1) << 4;
    uint32_t addr = rel ? buf + (off ^ ((off >> 3) & mask)) : ((buf + off) ^ (((buf + off) >> 3) & mask));
    uint32_t r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    out[lane * 4 + 0] = r0; out[lane * 4 + 1] = r1; out[lane * 4 + 2] = r2; out[lane * 4 + 3] = r3;
  }
  if (threadIdx.x == 0) { info[0] = w0; info[1] = ok; }
}

// ---- host ------------------------------------------------------------------------------------------

static CUresult make_map(CUtensorMap* map, void* gptr, int eb, int boxb, int rows, int mode) {
  CUtensorMapDataType t = eb == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                        : eb == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  cuuint64_t dims[2] = {(cuuint64_t)(256 / eb), 64};
  cuuint64_t strides[1] = {256};
  cuuint32_t box[2] = {(cuuint32_t)(boxb / eb), (cuuint32_t)rows};
  cuuint32_t estr[2] = {1, 1};
  return cuTensorMapEncodeTiled(map, t, 2, gptr, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                (CUtensorMapSwizzle)mode, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static const int GBYTES = 256 * 64 + 1024;

static void run_tma(int eb, int mode, int base, int boxb, int goff) {
  uint8_t *g, *out;
  uint32_t* info;
  CK(cudaMalloc(&g, GBYTES));
  CK(cudaMalloc(&out, WIN));
  CK(cudaMalloc(&info, 8));
  CUtensorMap map;
  CUresult r = make_map(&map, g + goff, eb, boxb, 16, mode);
  printf("{\"probe\": \"tma\", \"eb\": %d, \"mode\": %d, \"base\": %d, \"boxb\": %d, \"goff\": %d, \"encode\": %d",
         eb, mode, base, boxb, goff, (int)r);
  if (r != CUDA_SUCCESS) { printf("}\n"); return; }
  std::vector<uint8_t> host(GBYTES), got[3];
  uint32_t hinfo[2] = {0, 0};
  for (int pass = 0; pass < 3; ++pass) {
    for (int j = 0; j < GBYTES; ++j) host[j] = pass == 2 ? 0 : (uint8_t)((j - goff) >> (8 * pass));
    CK(cudaMemcpy(g, host.data(), GBYTES, cudaMemcpyHostToDevice));
    k_tma<<<1, 128, DYN>>>(map, base, boxb * 16, out, info);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf(", \"launch\": \"%s\"}\n", cudaGetErrorString(e)); fflush(stdout); exit(0); }
    got[pass].resize(WIN);
    CK(cudaMemcpy(got[pass].data(), out, WIN, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hinfo, info, 8, cudaMemcpyDeviceToHost));
  }
  printf(", \"window\": %u, \"landed\": %u, \"written\": [", hinfo[0], hinfo[1]);
  int first = 1;
  for (int a = 0; a < WIN; ++a) {
    if (got[2][a] == 0xAB) continue;  // not written (the fill of pass 2 is 0)
    printf("%s[%d,%d]", first ? "" : ",", a, got[0][a] | got[1][a] << 8);
    first = 0;
  }
  printf("]}\n");
}

static void run_tmastore(int eb, int mode, int base, int boxb) {
  uint8_t* g;
  uint32_t* info;
  CK(cudaMalloc(&g, GBYTES));
  CK(cudaMalloc(&info, 8));
  CUtensorMap map;
  CUresult r = make_map(&map, g, eb, boxb, 16, mode);
  printf("{\"probe\": \"tmastore\", \"eb\": %d, \"mode\": %d, \"base\": %d, \"boxb\": %d, \"encode\": %d",
         eb, mode, base, boxb, (int)r);
  if (r != CUDA_SUCCESS) { printf("}\n"); return; }
  std::vector<uint8_t> got[3];
  uint32_t w0 = 0;
  for (int pass = 0; pass < 3; ++pass) {
    CK(cudaMemset(g, pass == 2 ? 0xAB : 0, GBYTES));
    k_tmastore<<<1, 128, DYN>>>(map, base, pass == 2 ? 0 : pass, info);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf(", \"launch\": \"%s\"}\n", cudaGetErrorString(e)); fflush(stdout); exit(0); }
    got[pass].resize(GBYTES);
    CK(cudaMemcpy(got[pass].data(), g, GBYTES, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&w0, info, 4, cudaMemcpyDeviceToHost));
  }
  printf(", \"window\": %u, \"read\": [", w0);
  int first = 1;
  for (int j = 0; j < GBYTES; ++j) {
    if (got[2][j] == 0xAB) continue;  // not written by the store (pass 2 fills 0xAB first)
    printf("%s[%d,%d]", first ? "" : ",", j, got[0][j] | got[1][j] << 8);
    first = 0;
  }
  printf("]}\n");
}

static void run_gmma(int dt, int opnd, int major, int swz, int start, int boff, int lbo, int sbo) {
  float *out;
  uint32_t* info;
  CK(cudaMalloc(&out, 64 * 32 * 4));
  CK(cudaMalloc(&info, 8));
  CK(cudaFuncSetAttribute(k_gmma, cudaFuncAttributeMaxDynamicSharedMemorySize, DYN));
  std::vector<float> d[3];
  for (int pass = 0; pass < 3; ++pass) {
    k_gmma<<<1, 128, DYN>>>(dt, opnd, major, swz, start, boff, lbo, sbo, pass, out, info);
    CK(cudaDeviceSynchronize());
    d[pass].resize(64 * 32);
    CK(cudaMemcpy(d[pass].data(), out, 64 * 32 * 4, cudaMemcpyDeviceToHost));
  }
  uint32_t w0;
  CK(cudaMemcpy(&w0, info, 4, cudaMemcpyDeviceToHost));
  const char* dts[3] = {"f16", "tf32", "s8"};
  printf("{\"probe\": \"gmma\", \"dtype\": \"%s\", \"operand\": \"%s\", \"major\": \"%s\", \"swizzle\": %d, "
         "\"start\": %d, \"base_offset\": %d, \"lbo\": %d, \"sbo\": %d, \"window\": %u, \"slots\": [",
         dts[dt], opnd ? "B" : "A", major ? "MN" : "K", swz, start, boff, lbo, sbo, w0);
  // slots[row][k]: A rows m (64), B rows n (32); D[m][n] = A[m][n % K] or B[n][m % K].
  int K = kdim(dt), rows = opnd ? 32 : 64;
  for (int row = 0; row < rows; ++row) {
    printf("%s[", row ? "," : "");
    for (int k = 0; k < K; ++k) {
      int idx = opnd ? k * 32 + row : row * 32 + k;
      int s = 0;
      for (int p = 0; p < 3; ++p) s |= (int)d[p][idx] << (7 * p);
      printf("%s%d", k ? "," : "", s);
    }
    printf("]");
  }
  printf("]}\n");
}

static void fill_ids(uint16_t* g, int pass) {
  std::vector<uint16_t> host(GBYTES / 2);
  for (int j = 0; j < GBYTES / 2; ++j) host[j] = __half_as_ushort(__float2half((float)((j >> (7 * pass)) & 0x7F)));
  CK(cudaMemcpy(g, host.data(), GBYTES, cudaMemcpyHostToDevice));
}

static void run_tmagmma(int mode, int base, int boff, int kstep, int major) {
  uint16_t* g;
  float* out;
  uint32_t* info;
  CK(cudaMalloc(&g, GBYTES));
  CK(cudaMalloc(&out, 64 * 32 * 4));
  CK(cudaMalloc(&info, 8));
  CK(cudaFuncSetAttribute(k_tmagmma, cudaFuncAttributeMaxDynamicSharedMemorySize, DYN));
  int span = 16 << mode, swz = mode == 3 ? 1 : mode == 2 ? 2 : mode == 1 ? 3 : 0;
  CUtensorMap map;
  CUresult r = make_map(&map, g, 2, span, 32, mode);
  printf("{\"probe\": \"tmagmma\", \"mode\": %d, \"base\": %d, \"base_offset\": %d, \"kstep\": %d, \"major\": \"%s\", "
         "\"encode\": %d", mode, base, boff, kstep, major ? "MN" : "K", (int)r);
  if (r != CUDA_SUCCESS) { printf("}\n"); return; }
  std::vector<float> d[3];
  uint32_t hinfo[2];
  for (int pass = 0; pass < 3; ++pass) {
    fill_ids(g, pass);
    k_tmagmma<<<1, 128, DYN>>>(map, base, span * 32, swz, boff, kstep, major, span, out, info);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf(", \"launch\": \"%s\"}\n", cudaGetErrorString(e)); fflush(stdout); exit(0); }
    d[pass].resize(64 * 32);
    CK(cudaMemcpy(d[pass].data(), out, 64 * 32 * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hinfo, info, 8, cudaMemcpyDeviceToHost));
  }
  printf(", \"window\": %u, \"landed\": %u, \"elements\": [", hinfo[0], hinfo[1]);
  for (int n = 0; n < 32; ++n) {
    printf("%s[", n ? "," : "");
    for (int k = 0; k < 16; ++k) {
      int s = 0;
      for (int p = 0; p < 3; ++p) s |= (int)d[p][k * 32 + n] << (7 * p);
      printf("%s%d", k ? "," : "", s);
    }
    printf("]");
  }
  printf("]}\n");
}

static void run_ldsm(int mode, int base, int rel) {
  uint16_t* g;
  uint32_t *out, *info;
  CK(cudaMalloc(&g, GBYTES));
  CK(cudaMalloc(&out, 128 * 4));
  CK(cudaMalloc(&info, 8));
  int span = 16 << mode;
  CUtensorMap map;
  CUresult r = make_map(&map, g, 2, span, 16, mode);
  printf("{\"probe\": \"ldsm\", \"mode\": %d, \"base\": %d, \"xor\": \"%s\", \"encode\": %d", mode, base,
         rel ? "rel" : "abs", (int)r);
  if (r != CUDA_SUCCESS) { printf("}\n"); return; }
  std::vector<uint32_t> v[3];
  uint32_t hinfo[2];
  for (int pass = 0; pass < 3; ++pass) {
    fill_ids(g, pass);
    k_ldsm<<<1, 128, DYN>>>(map, base, span * 16, mode, rel, out, info);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf(", \"launch\": \"%s\"}\n", cudaGetErrorString(e)); fflush(stdout); exit(0); }
    v[pass].resize(128);
    CK(cudaMemcpy(v[pass].data(), out, 128 * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hinfo, info, 8, cudaMemcpyDeviceToHost));
  }
  // thread t, register i (matrix i): row (i & 1) * 8 + t / 4, chunk i >> 1, halves 2 * (t % 4) + {0, 1}.
  int ids[16][16];
  for (int t = 0; t < 32; ++t)
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) {
        int s = 0;
        for (int p = 0; p < 3; ++p) {
          uint16_t bits = (uint16_t)(v[p][t * 4 + i] >> (16 * h));
          s |= (int)__half2float(__ushort_as_half(bits)) << (7 * p);
        }
        ids[(i & 1) * 8 + t / 4][(i >> 1) * 8 + 2 * (t % 4) + h] = s;
      }
  printf(", \"window\": %u, \"landed\": %u, \"elements\": [", hinfo[0], hinfo[1]);
  for (int row = 0; row < 16; ++row) {
    printf("%s[", row ? "," : "");
    for (int c = 0; c < 16; ++c) printf("%s%d", c ? "," : "", ids[row][c]);
    printf("]");
  }
  printf("]}\n");
}

int main() {
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    char kind[16] = {0}, a[16] = {0}, b[16] = {0}, c[16] = {0};
    int x[8] = {0};
    if (sscanf(line, "%15s", kind) != 1) continue;
    if (!strcmp(kind, "tma")) {
      sscanf(line, "%*s %d %d %d %d %d", &x[0], &x[1], &x[2], &x[3], &x[4]);
      run_tma(x[0], x[1], x[2], x[3], x[4]);
    } else if (!strcmp(kind, "gmma")) {
      sscanf(line, "%*s %15s %15s %15s %d %d %d %d %d", a, b, c, &x[0], &x[1], &x[2], &x[3], &x[4]);
      int dt = !strcmp(a, "f16") ? 0 : !strcmp(a, "tf32") ? 1 : 2;
      run_gmma(dt, !strcmp(b, "B"), !strcmp(c, "MN"), x[0], x[1], x[2], x[3], x[4]);
    } else if (!strcmp(kind, "tmagmma")) {
      sscanf(line, "%*s %d %d %d %d %15s", &x[0], &x[1], &x[2], &x[3], c);
      run_tmagmma(x[0], x[1], x[2], x[3], !strcmp(c, "MN"));
    } else if (!strcmp(kind, "tmastore")) {
      sscanf(line, "%*s %d %d %d %d", &x[0], &x[1], &x[2], &x[3]);
      run_tmastore(x[0], x[1], x[2], x[3]);
    } else if (!strcmp(kind, "ldsm")) {
      sscanf(line, "%*s %d %d %15s", &x[0], &x[1], c);
      run_ldsm(x[0], x[1], !strcmp(c, "rel"));
    }
    fflush(stdout);
  }
  return 0;
}
