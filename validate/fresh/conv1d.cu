// 1-D convolution, radius 8, the input tile and its halo staged in shared memory.
#define R 8
#define BLOCK 256
extern "C" __global__ void conv1d(const float* x, const float* w, float* y, int n) {
  __shared__ float tile[BLOCK + 2 * R];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  tile[threadIdx.x + R] = i < n ? x[i] : 0.f;
  if (threadIdx.x < R) {
    int l = i - R, r = i + BLOCK;
    tile[threadIdx.x] = l >= 0 ? x[l] : 0.f;
    tile[threadIdx.x + BLOCK + R] = r < n ? x[r] : 0.f;
  }
  __syncthreads();
  if (i < n) {
    float s = 0.f;
#pragma unroll
    for (int k = -R; k <= R; k++) s += w[k + R] * tile[threadIdx.x + R + k];
    y[i] = s;
  }
}
