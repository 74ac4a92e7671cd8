// An sm90 TMA + wgmma mainloop in the form of the public H100 GEMM walk-throughs (CUTLASS's
// examples/cute/tutorial/hopper/wgmma_sm90.cu, and the hand-written "fast.cu" kernels): one
// warpgroup; per K step one elected thread issues two TMA loads (A and B, 64x64 bf16 boxes in the
// 128-byte swizzle mode) onto an mbarrier, every thread waits on it, and four wgmma m64n64k16 read
// both tiles through K-major 128B-swizzle descriptors. The epilogue stages the f32 accumulator
// through shared memory with 64-bit stores (the layout wgmma leaves it in) and writes C with 128-bit
// loads. Launch: 128 threads; arguments tmA, tmB (tensor maps of A: 64 x K and B: 64 x K, bf16,
// box 64x64, swizzle 128B), C (64x64 f32), K.
#include <cuda_bf16.h>

struct alignas(64) TensorMap { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ unsigned long long desc128(unsigned addr) {
  // start (16-byte units), LBO 16 B (unused by swizzled K-major), SBO 1024 B (8 rows x 128 B), 128B mode
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

extern "C" __global__ void __launch_bounds__(128)
tma_wgmma_gemm(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB, float *C, int K)
{
  __shared__ alignas(1024) __nv_bfloat16 sA[64 * 64];
  __shared__ alignas(1024) __nv_bfloat16 sB[64 * 64];
  __shared__ alignas(8) unsigned long long bar;
  __shared__ alignas(16) float sC[64 * 64];
  unsigned b = smem_addr(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  for (int kt = 0; kt < K / 64; ++kt) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(16384) : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   ::"r"(smem_addr(sA)), "l"(&tmA), "r"(kt * 64), "r"(0), "r"(b) : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   ::"r"(smem_addr(sB)), "l"(&tmB), "r"(kt * 64), "r"(0), "r"(b) : "memory");
    }
    asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT;\n}"
                 ::"r"(b), "r"(kt & 1) : "memory");
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int k = 0; k < 4; ++k) {
      unsigned long long da = desc128(smem_addr(sA) + 32 * k), db = desc128(smem_addr(sB) + 32 * k);
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
                   "%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}"
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                     "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                     "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                     "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                     "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                   : "l"(da), "l"(db));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    __syncthreads();
  }
  // the accumulator: warp w holds rows 16w + lane/4 (+8); columns 8j + 2(lane%4) (+1)
  int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int j = 0; j < 8; ++j) {
    int row = 16 * w + lane / 4, col = 8 * j + 2 * (lane % 4);
    *reinterpret_cast<float2 *>(&sC[row * 64 + col]) = make_float2(d[4 * j], d[4 * j + 1]);
    *reinterpret_cast<float2 *>(&sC[(row + 8) * 64 + col]) = make_float2(d[4 * j + 2], d[4 * j + 3]);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * 16; i += 128)
    reinterpret_cast<float4 *>(C)[i] = reinterpret_cast<const float4 *>(sC)[i];
}
