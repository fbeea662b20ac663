// gpusim-twin: kernels_ir/membound.py::mem_transpose_swizzled
// Transpose through a 32x32 shared tile without padding: the column index is XOR-swizzled with the row
// (tile[r][c ^ r]), so the column read hits 32 different banks. Same traffic as mem_transpose_padded, 4 KiB tile.
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_swizzled(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    int r = threadIdx.y + j;
    tile[r][threadIdx.x ^ r] = in[(y + j) * n + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    int c = threadIdx.y + j;  // the tile column this thread reads, in row threadIdx.x
    out[(y + j) * n + x] = tile[threadIdx.x][c ^ threadIdx.x];
  }
}
