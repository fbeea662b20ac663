// gpusim-twin: front-end only (no hand IR; validate/launches.py::block_scan)
// Inclusive scan of each 1024-float segment (one block per segment, 512 threads, two elements per thread), the
// Blelloch work-efficient scan in shared memory (GPU Gems 3, ch. 39): load in[seg*1024 + t] and [+ t + 512], an
// up-sweep of 10 levels (level d: threads t < 512 >> d add s[off*(2t+1)-1] into s[off*(2t+2)-1], off = 1 << d), the
// root cleared, a down-sweep of 10 levels (swap and add), one __syncthreads before each level, and the exclusive
// result plus the element stored: out[i] = in[seg*1024] + ... + in[i]. Unpadded: the up-sweep's strided indices
// pile onto few banks (block_scan_padded.cu removes the conflicts). grid n / 1024, n a multiple of 1024.
// Contents: any floats (measured: in=f32[n]:uniform(0,1), out=f32[n]).
#define SEG 1024
#define THREADS 512
extern "C" __global__ void block_scan(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[SEG];
  const int t = threadIdx.x;
  const float* src = in + (size_t)blockIdx.x * SEG;
  const float a = src[t], b = src[t + THREADS];
  s[t] = a;
  s[t + THREADS] = b;
  int off = 1;
  for (int d = THREADS; d > 0; d >>= 1) {  // up-sweep
    __syncthreads();
    if (t < d) {
      const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
      s[bi] += s[ai];
    }
    off <<= 1;
  }
  if (t == 0) s[SEG - 1] = 0.0f;
  for (int d = 1; d < SEG; d <<= 1) {  // down-sweep
    off >>= 1;
    __syncthreads();
    if (t < d) {
      const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
      const float v = s[ai];
      s[ai] = s[bi];
      s[bi] += v;
    }
  }
  __syncthreads();
  float* dst = out + (size_t)blockIdx.x * SEG;
  dst[t] = s[t] + a;
  dst[t + THREADS] = s[t + THREADS] + b;
}
