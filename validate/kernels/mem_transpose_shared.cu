// gpusim-twin: kernels_ir/membound.py::mem_transpose_shared
// NVIDIA's "coalesced transpose" through a 32x32 shared
// tile: coalesced loads and stores; the column read of the tile is a 32-way bank conflict.
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_shared(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
