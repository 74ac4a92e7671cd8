// A 32x32 float tile in dynamic shared memory whose row pitch is a kernel argument: rows are
// written along x (conflict-free for any pitch), columns read along x (lane x reads row x), so the
// column read's banks are (x * pitch + y) % 32: conflict-free for an odd pitch, gcd(pitch, 32)-way
// otherwise. `bankproof kernel examples/cuda/runtime_pitch.cu --block 32x8 --open pitch=32..64`
// answers for every pitch at once.
extern "C" __global__ void pitched_transpose(float *out, const float *in, int pitch)
{
    extern __shared__ float tile[];
    int x = threadIdx.x;
    for (int y = threadIdx.y; y < 32; y += blockDim.y)
        tile[y * pitch + x] = in[y * 32 + x];
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += blockDim.y)
        out[y * 32 + x] = tile[x * pitch + y];
}
