// A kernel through cooperative groups (their headers include siblings by quoted names).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cgk(float *out) {
    __shared__ float s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    s[threadIdx.x] = threadIdx.x;
    block.sync();
    float v = cg::reduce(warp, s[(threadIdx.x * 2) % 64], cg::plus<float>{});
    if (threadIdx.x == 0) out[0] = v;
}
