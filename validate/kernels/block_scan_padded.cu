// gpusim-twin: front-end only (no hand IR; validate/launches.py::block_scan_padded)
// block_scan.cu with conflict-free padding: every shared index k is stored at k + (k >> 5) (one padding word after
// each 32), in a 1056-float array, so the up- and down-sweep's strided indices fall in different banks. Otherwise the
// same: 512 threads per 1024-float segment, inclusive scan, grid n / 1024. Contents: in=f32[n]:uniform(0,1).
#define SEG 1024
#define THREADS 512
#define PAD(k) ((k) + ((k) >> 5))
extern "C" __global__ void block_scan_padded(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[SEG + SEG / 32];
  const int t = threadIdx.x;
  const float* src = in + (size_t)blockIdx.x * SEG;
  const float a = src[t], b = src[t + THREADS];
  s[PAD(t)] = a;
  s[PAD(t + THREADS)] = b;
  int off = 1;
  for (int d = THREADS; d > 0; d >>= 1) {  // up-sweep
    __syncthreads();
    if (t < d) {
      const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
      s[PAD(bi)] += s[PAD(ai)];
    }
    off <<= 1;
  }
  if (t == 0) s[PAD(SEG - 1)] = 0.0f;
  for (int d = 1; d < SEG; d <<= 1) {  // down-sweep
    off >>= 1;
    __syncthreads();
    if (t < d) {
      const int ai = PAD(off * (2 * t + 1) - 1), bi = PAD(off * (2 * t + 2) - 1);
      const float v = s[ai];
      s[ai] = s[bi];
      s[bi] += v;
    }
  }
  __syncthreads();
  float* dst = out + (size_t)blockIdx.x * SEG;
  dst[t] = s[PAD(t)] + a;
  dst[t + THREADS] = s[PAD(t + THREADS)] + b;
}
