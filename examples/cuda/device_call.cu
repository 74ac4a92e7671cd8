// A device function that is called, not inlined (__noinline__: PTX .func and call): it reads the
// shared tile at the index its caller passes, so its cost depends on the argument; half of the warp
// calls it with one stride, the other half takes the other branch and calls it with another.
// Launch: 64 threads; arguments out, stride.
__device__ __noinline__ float fetch(const float *tile, int i) { return tile[i]; }

extern "C" __global__ void device_call(float *out, int stride)
{
  __shared__ float tile[64 * 64];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float v;
  if (threadIdx.x % 2 == 0)
    v = fetch(tile, (threadIdx.x * stride) % 4096);
  else
    v = fetch(tile, threadIdx.x);
  out[threadIdx.x] = v;
}
