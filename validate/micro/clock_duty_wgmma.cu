// The SM clock against wgmma activity on the H100 (driven by validate/micro/run_clock_duty.py --wgmma, NVRTC
// sm_90a). One warpgroup per SM runs rounds of `wg` (1, 2, 4, 8, 16 or 64) wgmma m64n256k16 bf16 (operands in shared memory, one commit and
// wait per round) followed by a filler of `fill` steps: 8 independent FFMAs per thread (kind 0) or a
// __nanosleep(32) (kind 1, the SM mostly idle), until `ns` nanoseconds of %globaltimer have passed. Thread 0 records
// (clock64 start, end, globaltimer start, end, wgmmas issued): the SM clock is d(clock64) / d(globaltimer), the
// tensor activity the wgmma FLOPs per SM per cycle over the dense peak.
#include "hopper.cu"

#define WG_ROUND(N)                                                  \
  do {                                                               \
    wg_fence();                                                      \
    _Pragma("unroll") for (int u = 0; u < N; ++u) wgmma_n256(d, da, db); \
    wg_commit();                                                     \
    wg_wait0();                                                      \
    issued += N;                                                     \
  } while (0)

extern "C" __global__ void __launch_bounds__(128) clk_duty_wgmma(long long ns, int wg, int fill, int kind,
                                                                 unsigned int seed, float* sink, long long* rec) {
  extern __shared__ __align__(1024) unsigned char wsm[];
  wg_fill(wsm, 2048 + 256 * 32, seed);
  const unsigned int a = smem_u32(wsm);
  const unsigned long long da = make_desc(a, 128, 256), db = make_desc(a + 2048, 128, 256);
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = 0.5f + c * threadIdx.x;
  __syncthreads();
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0, issued = 0;
  while (g - g0 < ns) {
    switch (wg) {  // rounds of a fixed, unrolled length (a runtime trip count around wgmma faults)
      case 1: WG_ROUND(1); break;
      case 2: WG_ROUND(2); break;
      case 4: WG_ROUND(4); break;
      case 8: WG_ROUND(8); break;
      case 16: WG_ROUND(16); break;
      case 64: WG_ROUND(64); break;
      default: break;
    }
    for (int i = 0; i < fill; ++i) {
      if (kind == 0) {
#pragma unroll
        for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], 0.999f, 0.001f);
      } else {
        __nanosleep(32);
      }
    }
    g = gtimer();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) {
    long long* r = rec + 5 * blockIdx.x;
    r[0] = c0;
    r[1] = c1;
    r[2] = g0;
    r[3] = g;
    r[4] = issued;
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += d[i];
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[0] = s;
}
