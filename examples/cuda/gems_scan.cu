// Prefix sums from GPU Gems 3, chapter 39 (Harris, Sengupta, Owens, "Parallel Prefix Sum (Scan)
// with CUDA", NVIDIA): Example 39-1, the naive double-buffered scan (Hillis and Steele), and
// Example 39-2, the work-efficient scan (Blelloch), whose tree steps hit one bank with more lanes
// as the stride grows; with PAD, section 39.2.3's CONFLICT_FREE_OFFSET padding (one float every
// 32), which the chapter gives to remove those conflicts. One block scans n elements.
#ifndef PAD
#define PAD 0
#endif
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(i) (PAD ? ((i) >> LOG_NUM_BANKS) : 0)

extern "C" __global__ void scan_naive(float *g_odata, const float *g_idata, int n)
{
    extern __shared__ float temp[];  // 2 * n: double buffered
    int thid = threadIdx.x;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = (thid > 0) ? g_idata[thid - 1] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_odata[thid] = temp[pout * n + thid];
}

extern "C" __global__ void scan_blelloch(float *g_odata, const float *g_idata, int n)
{
    extern __shared__ float temp[];  // n, plus n / 32 with PAD
    int thid = threadIdx.x;
    int offset = 1;
    int ai = thid, bi = thid + n / 2;
    temp[ai + CONFLICT_FREE_OFFSET(ai)] = g_idata[ai];
    temp[bi + CONFLICT_FREE_OFFSET(bi)] = g_idata[bi];
    for (int d = n >> 1; d > 0; d >>= 1) {  // up-sweep
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0)
        temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0;
    for (int d = 1; d < n; d *= 2) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    g_odata[ai] = temp[ai + CONFLICT_FREE_OFFSET(ai)];
    g_odata[bi] = temp[bi + CONFLICT_FREE_OFFSET(bi)];
}
