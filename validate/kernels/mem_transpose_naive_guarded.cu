// gpusim-twin: kernels_ir/membound.py::mem_transpose_naive_guarded
// The naive transpose for any N: the grid rounds up (ceil(N/32) blocks per side), so the last block of each grid
// dimension is a partial tile, and every element sits behind a bounds guard.
#define TILE 32
#define ROWS 8
extern "C" __global__ void mem_transpose_naive_guarded(const float* __restrict__ in, float* __restrict__ out,
                                                       int n) {
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n) out[x * n + (y + j)] = in[(y + j) * n + x];
}
