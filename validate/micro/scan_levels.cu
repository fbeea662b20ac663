// Where block_scan.cu's time goes (validate/micro/run_scan_levels.py): block_scan.cu's Blelloch scan (512 threads,
// 1024 floats a CTA) with its parts switched by -D: UP=0 drops the up-sweep, DOWN=0 the down-sweep, SYNC=0 the
// __syncthreads before each level (the result is then wrong, the time says what the barriers cost), PAD=1 pads
// every 32 words (block_scan_padded.cu's indices, no conflicts). UP=1 DOWN=1 SYNC=1 PAD=0 is block_scan.cu itself,
// UP=1 DOWN=1 SYNC=1 PAD=1 block_scan_padded.cu. grid n / 1024, in=f32[n], out=f32[n].
#ifndef UP
#define UP 1
#endif
#ifndef DOWN
#define DOWN 1
#endif
#ifndef SYNC
#define SYNC 1
#endif
#ifndef PAD
#define PAD 0
#endif
#define SEG 1024
#define THREADS 512
#if PAD
#define IX(k) ((k) + ((k) >> 5))
#else
#define IX(k) (k)
#endif
#if SYNC
#define BARRIER() __syncthreads()
#else
#define BARRIER()
#endif
extern "C" __global__ void scan_levels(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[SEG + SEG / 32];
  const int t = threadIdx.x;
  const float* src = in + (size_t)blockIdx.x * SEG;
  const float a = src[t], b = src[t + THREADS];
  s[IX(t)] = a;
  s[IX(t + THREADS)] = b;
  int off = 1;
#if UP
  for (int d = THREADS; d > 0; d >>= 1) {
    BARRIER();
    if (t < d) {
      const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
      s[IX(bi)] += s[IX(ai)];
    }
    off <<= 1;
  }
#else
  off = SEG;
#endif
  if (t == 0) s[IX(SEG - 1)] = 0.0f;
#if DOWN
  for (int d = 1; d < SEG; d <<= 1) {
    off >>= 1;
    BARRIER();
    if (t < d) {
      const int ai = IX(off * (2 * t + 1) - 1), bi = IX(off * (2 * t + 2) - 1);
      const float v = s[ai];
      s[ai] = s[bi];
      s[bi] += v;
    }
  }
#endif
  __syncthreads();
  float* dst = out + (size_t)blockIdx.x * SEG;
  dst[t] = s[IX(t)] + a;
  dst[t + THREADS] = s[IX(t + THREADS)] + b;
}
