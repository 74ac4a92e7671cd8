// Three Rodinia kernels (University of Virginia, https://github.com/yuhc/gpu-rodinia), each kept to
// its shared-memory pattern: LU decomposition's lud_diagonal (cuda/lud/lud_kernel.cu), which walks a
// BLOCK_SIZE x BLOCK_SIZE shared tile down its columns, and pathfinder's dynproc_kernel
// (cuda/pathfinder/pathfinder.cu), which reads the previous row's neighbours at +-1.
#define BLOCK_SIZE 16
extern "C" __global__ void lud_diagonal(float *m, int matrix_dim, int offset)
{
    __shared__ float shadow[BLOCK_SIZE][BLOCK_SIZE];
    int array_offset = offset * matrix_dim + offset;
    for (int i = 0; i < BLOCK_SIZE; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];
        array_offset += matrix_dim;
    }
    __syncthreads();
    for (int i = 0; i < BLOCK_SIZE - 1; i++) {
        if (threadIdx.x > i) {
            for (int j = 0; j < i; j++)
                shadow[threadIdx.x][i] -= shadow[threadIdx.x][j] * shadow[j][i];
            shadow[threadIdx.x][i] /= shadow[i][i];
        }
        __syncthreads();
        if (threadIdx.x > i) {
            for (int j = 0; j < i + 1; j++)
                shadow[i + 1][threadIdx.x] -= shadow[i + 1][j] * shadow[j][threadIdx.x];
        }
        __syncthreads();
    }
    array_offset = (offset + 1) * matrix_dim + offset;
    for (int i = 1; i < BLOCK_SIZE; i++) {
        m[array_offset + threadIdx.x] = shadow[i][threadIdx.x];
        array_offset += matrix_dim;
    }
}

#define PF_BLOCK 256
#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))
#define CLAMP_RANGE(x, min, max) x = (x < (min)) ? min : ((x > (max)) ? max : x)
#define MIN(a, b) ((a) <= (b) ? (a) : (b))
extern "C" __global__ void dynproc_kernel(int iteration, int *gpuWall, int *gpuSrc, int *gpuResults, int cols,
                                          int rows, int startStep, int border)
{
    __shared__ int prev[PF_BLOCK];
    __shared__ int result[PF_BLOCK];
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int small_block_cols = PF_BLOCK - iteration * 2;
    int blkX = small_block_cols * bx - border;
    int blkXmax = blkX + PF_BLOCK - 1;
    int xidx = blkX + tx;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > cols - 1) ? PF_BLOCK - 1 - (blkXmax - cols + 1) : PF_BLOCK - 1;
    int W = tx - 1;
    int E = tx + 1;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;
    bool isValid = IN_RANGE(tx, validXmin, validXmax);
    if (IN_RANGE(xidx, 0, cols - 1))
        prev[tx] = gpuSrc[xidx];
    __syncthreads();
    bool computed;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, PF_BLOCK - i - 2) && isValid) {
            computed = true;
            int left = prev[W];
            int up = prev[tx];
            int right = prev[E];
            int shortest = MIN(left, up);
            shortest = MIN(shortest, right);
            int index = cols * (startStep + i) + xidx;
            result[tx] = shortest + gpuWall[index];
        }
        __syncthreads();
        if (i == iteration - 1)
            break;
        if (computed)
            prev[tx] = result[tx];
        __syncthreads();
    }
    if (computed)
        gpuResults[xidx] = result[tx];
}

// hotspot's calculate_temp (cuda/hotspot/hotspot.cu), one step: a 16x16 shared tile of temperatures
// read at the four neighbours of each cell.
#define HS_BLOCK 16
extern "C" __global__ void hotspot_step(float *power, float *temp_src, float *temp_dst, int grid_cols, int grid_rows,
                                        float Cap, float Rx, float Ry, float Rz, float step)
{
    __shared__ float temp_on_cuda[HS_BLOCK][HS_BLOCK];
    __shared__ float power_on_cuda[HS_BLOCK][HS_BLOCK];
    __shared__ float temp_t[HS_BLOCK][HS_BLOCK];
    int tx = threadIdx.x, ty = threadIdx.y;
    int yidx = blockIdx.y * HS_BLOCK + ty, xidx = blockIdx.x * HS_BLOCK + tx;
    int index = grid_cols * yidx + xidx;
    temp_on_cuda[ty][tx] = temp_src[index];
    power_on_cuda[ty][tx] = power[index];
    __syncthreads();
    int N = ty - 1 < 0 ? 0 : ty - 1, S = ty + 1 > HS_BLOCK - 1 ? HS_BLOCK - 1 : ty + 1;
    int W = tx - 1 < 0 ? 0 : tx - 1, E = tx + 1 > HS_BLOCK - 1 ? HS_BLOCK - 1 : tx + 1;
    float amb = 80.0f;
    temp_t[ty][tx] = temp_on_cuda[ty][tx] + step / Cap * (power_on_cuda[ty][tx] +
        (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * temp_on_cuda[ty][tx]) * Ry +
        (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] - 2.0f * temp_on_cuda[ty][tx]) * Rx +
        (amb - temp_on_cuda[ty][tx]) * Rz);
    __syncthreads();
    temp_dst[index] = temp_t[ty][tx];
}
