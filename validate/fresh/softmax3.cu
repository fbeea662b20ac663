// Row softmax in three passes over the row (its max, the sum of exp(x - max), then the output), one block of 256
// threads per row, warp shuffles and a shared array for the block's reductions. Written as a new user writes it.
__device__ float block_reduce(float v, float* s, bool is_max) {
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = s[0];
  for (int i = 1; i < (int)(blockDim.x >> 5); i++) t = is_max ? fmaxf(t, s[i]) : t + s[i];
  __syncthreads();
  return t;
}
extern "C" __global__ void softmax3(const float* x, float* y, int cols) {
  __shared__ float s[32];
  const float* row = x + (size_t)blockIdx.x * cols;
  float* out = y + (size_t)blockIdx.x * cols;
  float m = __int_as_float(0xff800000);  // -inf (NVRTC has no INFINITY)
  for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
  m = block_reduce(m, s, true);
  float z = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) z += __expf(row[j] - m);
  z = block_reduce(z, s, false);
  float inv = 1.f / z;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) out[j] = __expf(row[j] - m) * inv;
}
