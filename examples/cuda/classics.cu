// Classic shared-memory kernels, each from its public source:
// - nbody_forces: GPU Gems 3, chapter 31 (Nyland, Harris, Prins, "Fast N-Body Simulation with CUDA",
//   NVIDIA), Listing 31-3's tile_calculation: every thread reads the same shared body (a broadcast);
// - dot_product: "CUDA by Example" (Sanders, Kandrot), chapter 5's dot product with a shared cache
//   reduced by halving;
// - reduce_unrolled: Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA), kernel 5: the first
//   add during the global load and the last warp unrolled through a volatile pointer;
// - stencil2d: a 2-D radius-4 star stencil with a shared tile and halos, as in Micikevicius,
//   "3D Finite Difference Computation on GPUs using CUDA" (NVIDIA), reduced to two dimensions.
extern "C" __global__ void nbody_forces(float4 *accel, const float4 *pos, int n, float eps2)
{
    extern __shared__ float4 shPosition[];
    float4 my = pos[blockIdx.x * blockDim.x + threadIdx.x];
    float3 acc = {0.0f, 0.0f, 0.0f};
    for (int i = 0, tile = 0; i < n; i += blockDim.x, tile++) {
        shPosition[threadIdx.x] = pos[tile * blockDim.x + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < blockDim.x; j++) {
            float4 b = shPosition[j];
            float3 r = {b.x - my.x, b.y - my.y, b.z - my.z};
            float d2 = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
            float inv = rsqrtf(d2 * d2 * d2);
            float s = b.w * inv;
            acc.x += r.x * s;
            acc.y += r.y * s;
            acc.z += r.z * s;
        }
        __syncthreads();
    }
    accel[blockIdx.x * blockDim.x + threadIdx.x] = make_float4(acc.x, acc.y, acc.z, 0.0f);
}

#define THREADS_PER_BLOCK 256
extern "C" __global__ void dot_product(const float *a, const float *b, float *c, int n)
{
    __shared__ float cache[THREADS_PER_BLOCK];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    int cacheIndex = threadIdx.x;
    float temp = 0;
    while (tid < n) {
        temp += a[tid] * b[tid];
        tid += blockDim.x * gridDim.x;
    }
    cache[cacheIndex] = temp;
    __syncthreads();
    int i = blockDim.x / 2;
    while (i != 0) {
        if (cacheIndex < i)
            cache[cacheIndex] += cache[cacheIndex + i];
        __syncthreads();
        i /= 2;
    }
    if (cacheIndex == 0)
        c[blockIdx.x] = cache[0];
}

__device__ void warpReduce(volatile float *sdata, unsigned tid)
{
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
}

extern "C" __global__ void reduce_unrolled(float *g_odata, const float *g_idata)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    sdata[tid] = g_idata[i] + g_idata[i + blockDim.x];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32)
        warpReduce(sdata, tid);
    if (tid == 0)
        g_odata[blockIdx.x] = sdata[0];
}

#define BX 32
#define BY 8
#define R 4
extern "C" __global__ void stencil2d(float *out, const float *in, int nx)
{
    __shared__ float tile[BY + 2 * R][BX + 2 * R];
    int gx = blockIdx.x * BX + threadIdx.x + R;  // interior points: the halo lies inside the array
    int gy = blockIdx.y * BY + threadIdx.y + R;
    int tx = threadIdx.x + R, ty = threadIdx.y + R;
    tile[ty][tx] = in[gy * nx + gx];
    if (threadIdx.y < R) {
        tile[ty - R][tx] = in[(gy - R) * nx + gx];
        tile[ty + BY][tx] = in[(gy + BY) * nx + gx];
    }
    if (threadIdx.x < R) {
        tile[ty][tx - R] = in[gy * nx + gx - R];
        tile[ty][tx + BX] = in[gy * nx + gx + BX];
    }
    __syncthreads();
    float v = tile[ty][tx];
    for (int k = 1; k <= R; k++)
        v += tile[ty][tx - k] + tile[ty][tx + k] + tile[ty - k][tx] + tile[ty + k][tx];
    out[gy * nx + gx] = v;
}
