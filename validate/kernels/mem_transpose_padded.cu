// gpusim-twin: kernels_ir/membound.py::mem_transpose_padded
// NVIDIA's "coalesced transpose" through a 32x33 shared
// tile padded to 33 columns: coalesced loads and stores, conflict-free column reads.
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_padded(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE + 1];  // one word of padding per row: no bank conflict
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
