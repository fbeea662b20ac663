// RMSNorm of each row (one block of 256 threads per row), float4 loads, a shared-memory reduction of the squares.
extern "C" __global__ void rmsnorm(const float4* x, const float4* w, float4* y, int cols4, float eps) {
  __shared__ float red[256];
  const float4* row = x + (size_t)blockIdx.x * cols4;
  float4* out = y + (size_t)blockIdx.x * cols4;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols4; c += blockDim.x) {
    float4 v = row[c];
    s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  red[threadIdx.x] = s;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) red[threadIdx.x] += red[threadIdx.x + o];
    __syncthreads();
  }
  float r = rsqrtf(red[0] / (4.f * cols4) + eps);
  for (int c = threadIdx.x; c < cols4; c += blockDim.x) {
    float4 v = row[c], g = w[c];
    out[c] = make_float4(v.x * r * g.x, v.y * r * g.y, v.z * r * g.z, v.w * r * g.w);
  }
}
