// The CUDA Samples' scalarProd (NVIDIA, https://github.com/NVIDIA/cuda-samples,
// Samples/0_Introduction/scalarProd/scalarProd_kernel.cuh), kept to its shared-memory pattern: per-
// thread partial sums accumulated in a shared array, reduced by halving.
#define ACCUM_N 1024
extern "C" __global__ void scalar_prod(float *d_C, const float *d_A, const float *d_B, int vectorN, int elementN)
{
    __shared__ float accumResult[ACCUM_N];
    for (int vec = blockIdx.x; vec < vectorN; vec += gridDim.x) {
        int vectorBase = elementN * vec;
        int vectorEnd = vectorBase + elementN;
        for (int iAccum = threadIdx.x; iAccum < ACCUM_N; iAccum += blockDim.x) {
            float sum = 0;
            for (int pos = vectorBase + iAccum; pos < vectorEnd; pos += ACCUM_N)
                sum += d_A[pos] * d_B[pos];
            accumResult[iAccum] = sum;
        }
        for (int stride = ACCUM_N / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int iAccum = threadIdx.x; iAccum < stride; iAccum += blockDim.x)
                accumResult[iAccum] += accumResult[stride + iAccum];
        }
        __syncthreads();
        if (threadIdx.x == 0)
            d_C[vec] = accumResult[0];
    }
}

// The CUDA Samples' matrixMul (Samples/0_Introduction/matrixMul/matrixMul.cu) at its BLOCK_SIZE of
// 32: As[ty][k] is a broadcast across a warp's lanes, Bs[k][tx] a row read.
#define MM_BLOCK 32
extern "C" __global__ void matrix_mul_cuda(float *C, const float *A, const float *B, int wA, int wB)
{
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * MM_BLOCK * by, aEnd = aBegin + wA - 1, aStep = MM_BLOCK;
    int bBegin = MM_BLOCK * bx, bStep = MM_BLOCK * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[MM_BLOCK][MM_BLOCK];
        __shared__ float Bs[MM_BLOCK][MM_BLOCK];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < MM_BLOCK; ++k)
            Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    int c = wB * MM_BLOCK * by + MM_BLOCK * bx;
    C[c + wB * ty + tx] = Csub;
}
