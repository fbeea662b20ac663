// 2D convolution, 5x5 filter in __constant__ memory, 16x16 output tiles with a 2-element halo staged in shared memory
// (every other block's rows start across a 128-B line). Written as a new user writes it.
#define R 2
#define T 16
__constant__ float filt[(2 * R + 1) * (2 * R + 1)] = {
    0.01f, 0.02f, 0.03f, 0.02f, 0.01f, 0.02f, 0.05f, 0.08f, 0.05f, 0.02f, 0.03f, 0.08f, 0.12f,
    0.08f, 0.03f, 0.02f, 0.05f, 0.08f, 0.05f, 0.02f, 0.01f, 0.02f, 0.03f, 0.02f, 0.01f};
extern "C" __global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[T + 2 * R][T + 2 * R];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int dy = threadIdx.y; dy < T + 2 * R; dy += T)
    for (int dx = threadIdx.x; dx < T + 2 * R; dx += T) {
      int gx = blockIdx.x * T + dx - R, gy = blockIdx.y * T + dy - R;
      tile[dy][dx] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? in[gy * w + gx] : 0.f;
    }
  __syncthreads();
  if (x >= w || y >= h) return;
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 2 * R + 1; ++i)
#pragma unroll
    for (int j = 0; j < 2 * R + 1; ++j) s += filt[i * (2 * R + 1) + j] * tile[threadIdx.y + i][threadIdx.x + j];
  out[y * w + x] = s;
}
