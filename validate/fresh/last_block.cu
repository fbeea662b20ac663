// Block sums, then the last block to finish (a retirement counter, atomicInc) adds them all: threadfence reduction.
extern "C" __global__ void last_block(const float* x, float* partial, unsigned* retired, float* out, int n) {
  __shared__ float s[256];
  __shared__ bool last;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicInc(retired, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {
    float a = 0.f;
    for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) a += partial[b];
    s[threadIdx.x] = a;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
      if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = s[0];
  }
}
