// The SM clock against tensor activity on the H100 (driven by validate/micro/run_clock_duty.py, NVRTC sm_90a).
// Every SM runs rounds of `mmas` mma.sync m16n8k16 bf16 (4 independent accumulators per warp) followed by a filler
// of `fill` steps: 8 independent FFMAs per thread (kind 0) or a __nanosleep(32) (kind 1, the SM mostly idle), until
// `ns` nanoseconds of %globaltimer have passed. Thread 0 of each block records (clock64 start, end, globaltimer
// start, end, mma.sync issued by its warp): the SM clock is d(clock64) / d(globaltimer), the tensor activity the
// mma.sync FLOPs per SM per cycle.
static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#include "clock_duty_common.cuh"

extern "C" __global__ void clk_duty(long long ns, int mmas, int fill, int kind, unsigned int seed, float* sink,
                                    long long* rec) {
  const unsigned int a0 = seed ^ (threadIdx.x * 2654435761u), a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u,
                     b0 = a0 * 11u, b1 = a0 * 13u;
  float d[4][4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#pragma unroll
    for (int e = 0; e < 4; ++e) d[c][e] = 0.0f;
  }
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = 0.5f + c * threadIdx.x;
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0, issued = 0;
  while (g - g0 < ns) {
    for (int i = 0; i < mmas; ++i) mma_sync_x4(d, a0, a1, a2, a3, b0, b1);
    issued += 4LL * mmas;
    duty_filler(x, fill, kind);
    g = gtimer();
  }
  duty_record(rec, c0, clock64(), g0, g, issued);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 4; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[0] = s;
}
