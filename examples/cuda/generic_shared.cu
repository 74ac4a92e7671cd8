// Generic (not .shared) loads and stores that address shared memory: a shared array's address taken
// as a plain pointer and used by generic ld/st (what nvcc and LLVM emit when they cannot prove the
// space, written here with inline PTX so that the compiler cannot turn them back into ld.shared).
// STRIDE floats between lanes: 32 puts every lane on one bank, 33 on 32 different banks.
// Launch: 32 threads; arguments out, stride.
extern "C" __global__ void generic_shared(float *out, int stride)
{
  __shared__ float buf[32 * 33];
  unsigned long long g = reinterpret_cast<unsigned long long>(buf + threadIdx.x * stride);
  asm volatile("st.f32 [%0], %1;" ::"l"(g), "f"(float(threadIdx.x)) : "memory");
  __syncthreads();
  float v;
  asm volatile("ld.f32 %0, [%1];" : "=f"(v) : "l"(g) : "memory");
  out[threadIdx.x] = v;
}
