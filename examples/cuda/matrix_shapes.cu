// ldmatrix and stmatrix in every shape (.x1, .x2, .x4, with and without .trans), as CuTe's copy
// atoms issue them (cute/arch/copy_sm75.hpp SM75_U32x{1,2,4}_LDSM_N / U16x{2,4,8}_LDSM_T,
// copy_sm90.hpp SM90_U32x{1,2,4}_STSM_N / U16x{2,4,8}_STSM_T): each lane gives one 16-byte row of
// a 64x64 half tile whose rows are ROW bytes apart (128: all 8 rows of a matrix in one bank group;
// 144: padded, conflict-free). Launch: 32 threads; argument out.
#ifndef ROW
#define ROW 128
#endif
#include <cuda_fp16.h>

extern "C" __global__ void matrix_shapes(unsigned *out)
{
  __shared__ alignas(128) char tile[64 * ROW];
  unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  int lane = threadIdx.x;
  unsigned row = base + (lane % 8) * ROW + (lane / 8) * 8 * ROW;  // lane l: row l%8 of matrix l/8
  unsigned a = lane, b = 2 * lane, c = 3 * lane, d = 4 * lane;
  asm volatile("stmatrix.sync.aligned.x1.m8n8.shared.b16 [%0], {%1};" ::"r"(row), "r"(a) : "memory");
  asm volatile("stmatrix.sync.aligned.x2.trans.m8n8.shared.b16 [%0], {%1, %2};" ::"r"(row + 16), "r"(a), "r"(b) : "memory");
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row + 32), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
  __syncthreads();
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b), "=r"(c) : "r"(row + 16));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(row + 32));
  out[lane] = a + b + c + d;
}
