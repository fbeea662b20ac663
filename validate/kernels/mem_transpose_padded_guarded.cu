// gpusim-twin: kernels_ir/membound.py::mem_transpose_padded_guarded
// The padded shared-tile transpose for any N: ceil(N/32) blocks per side, the partial tiles of the last block
// row and column guarded on the load into the tile and on the store out of it.
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_padded_guarded(const float* __restrict__ in, float* __restrict__ out,
                                                        int n) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
