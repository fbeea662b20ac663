// gpusim-twin: front-end only (no hand IR; validate/launches.py::stencil5)
// 2D 5-point stencil on an n x n row-major float grid: out[y][x] = 0.5 in[y][x] + 0.125 (in[y][x-1] + in[y][x+1] +
// in[y-1][x] + in[y+1][x]) for interior cells; border cells (x == 0, y == 0, x == n-1, y == n-1) copy in[y][x].
// Blocks of 32 x 8 threads cover 32 x 32 tiles, each thread 4 rows 8 apart (as the transposes); grid ceil(n/32) in x
// and y, cells past n guarded off (any n). The first and last blocks of each grid dimension hold the border guards,
// so they run other code than the interior blocks. Contents: any floats (measured: in=f32[n*n]:uniform(0,1)).
#define TILE 32
#define ROWS 8
extern "C" __global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y0 = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    const int y = y0 + j;
    if (x < n && y < n) {
      const size_t i = (size_t)y * n + x;
      const float c = in[i];
      if (x == 0 || y == 0 || x == n - 1 || y == n - 1)
        out[i] = c;
      else
        out[i] = 0.5f * c + 0.125f * ((in[i - 1] + in[i + 1]) + (in[i - n] + in[i + n]));
    }
  }
}
