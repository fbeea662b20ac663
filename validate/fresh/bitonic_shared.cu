// Bitonic sort of 1024-element segments in shared memory: compare-exchange steps between __syncthreads.
#define SEG 1024
extern "C" __global__ void bitonic_shared(const float* x, float* y) {
  __shared__ float s[SEG];
  int base = blockIdx.x * SEG;
  for (int t = threadIdx.x; t < SEG; t += blockDim.x) s[t] = x[base + t];
  __syncthreads();
  for (int k = 2; k <= SEG; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < SEG; t += blockDim.x) {
        int p = t ^ j;
        if (p > t) {
          float a = s[t], b = s[p];
          bool up = (t & k) == 0;
          if ((a > b) == up) { s[t] = b; s[p] = a; }
        }
      }
      __syncthreads();
    }
  }
  for (int t = threadIdx.x; t < SEG; t += blockDim.x) y[base + t] = s[t];
}
