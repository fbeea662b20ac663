// Register-read micro-benchmark (validate/micro/run_regread.py): every warp loops over BODY FFMAs whose sources are
// three registers (-DREADS=3, no operand reuse in the SASS) or two registers and an immediate (-DREADS=2), 8
// independent chains; rec per block: clock64 start, end.
#ifndef BODY
#define BODY 1024
#endif
extern "C" __global__ void rr_body(int iters, float seed, float* sink, long long* rec) {
  float x[8], y[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) { x[c] = seed + c * threadIdx.x; y[c] = 1.0f + 1e-6f * (c + threadIdx.x); }
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < BODY; ++i) {
#if READS == 3
      x[i & 7] = fmaf(x[i & 7], y[(i * 3 + 1) & 7], x[(i + 3) & 7]);
#else
      x[i & 7] = fmaf(x[i & 7], 1.000001f, x[(i + 3) & 7]);
#endif
    }
  }
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c] + y[c];
  if (s == 1234.5f) sink[0] = s;
  if (threadIdx.x == 0) { rec[2 * blockIdx.x] = t0; rec[2 * blockIdx.x + 1] = t1; }
}
