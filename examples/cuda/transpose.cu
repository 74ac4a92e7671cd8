// Shared-memory matrix transpose, three ways: the tiled kernel of NVIDIA's "An Efficient Matrix
// Transpose in CUDA C/C++" (Mark Harris, NVIDIA Developer Blog, 2013; also the CUDA samples'
// transpose), its padded tile (TILE_DIM+1 columns) and an XOR-swizzled tile (column ^ row).
// Launch: block 32x8, grid (n/32, n/32); every thread moves TILE_DIM/BLOCK_ROWS elements.
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_naive_tile(float *odata, const float *idata, int n)
{
  __shared__ float tile[TILE_DIM][TILE_DIM];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void transpose_padded(float *odata, const float *idata, int n)
{
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void transpose_swizzled(float *odata, const float *idata, int n)
{
  __shared__ float tile[TILE_DIM][TILE_DIM];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    int r = threadIdx.y + j;
    tile[r][threadIdx.x ^ r] = idata[(y + j) * n + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    int c = threadIdx.y + j;
    odata[(y + j) * n + x] = tile[threadIdx.x][c ^ threadIdx.x];
  }
}
