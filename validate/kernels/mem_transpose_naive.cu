// gpusim-twin: kernels_ir/membound.py::mem_transpose_naive
// NVIDIA's "naive transpose": 32x32 tiles, 32x8 threads,
// each thread moves 4 elements; loads are coalesced, stores walk a column (32 sectors per warp store).
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_naive(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) out[x * n + (y + j)] = in[(y + j) * n + x];
}
