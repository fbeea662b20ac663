// Where stencil5.cu's time goes at 8192^2 (validate/micro/run_stencil_rows.py): stencil5.cu's tiling (32 x 8 threads,
// a 32 x 32 tile, four rows 8 apart a thread, border cells copied) with its neighbour loads switched by -D: H=0 drops
// the left and right neighbours, V=0 the rows above and below (H=0 V=0: a copy in the stencil's tiling). H=1 V=1 is
// stencil5.cu itself. Run at pitches n (the grid's side) 8192 and 8224 to see whether a power-of-two pitch costs.
#ifndef H
#define H 1
#endif
#ifndef V
#define V 1
#endif
#define TILE 32
#define ROWS 8
extern "C" __global__ void stencil_rows(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y0 = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
    const int y = y0 + j;
    if (x < n && y < n) {
      const size_t i = (size_t)y * n + x;
      const float c = in[i];
      if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = c;
      } else {
        float acc = 0.5f * c;
#if H
        acc += 0.125f * (in[i - 1] + in[i + 1]);
#endif
#if V
        acc += 0.125f * (in[i - n] + in[i + n]);
#endif
        out[i] = acc;
      }
    }
  }
}
