// The SM clock against wgmma activity on the H100 (driven by validate/micro/run_clock_duty.py --wgmma, NVRTC
// sm_90a). One warpgroup per SM runs rounds of N (1, 2, 4, 8, 16 or 64: one kernel each, clk_duty_wgmma_N) wgmma m64n256k16 bf16 (operands in shared memory, one commit and
// wait per round) followed by a filler of `fill` steps: 8 independent FFMAs per thread (kind 0) or a
// __nanosleep(32) (kind 1, the SM mostly idle), until `ns` nanoseconds of %globaltimer have passed. Thread 0 records
// (clock64 start, end, globaltimer start, end, wgmmas issued): the SM clock is d(clock64) / d(globaltimer), the
// tensor activity the wgmma FLOPs per SM per cycle over the dense peak.
#include "hopper.cu"
#include "clock_duty_common.cuh"

#define WG_ROUND(N)                                                  \
  do {                                                               \
    wg_fence();                                                      \
    _Pragma("unroll") for (int u = 0; u < N; ++u) wgmma_n256(d, da, db); \
    wg_commit();                                                     \
    wg_wait0();                                                      \
    issued += N;                                                     \
  } while (0)

#define CLK_DUTY_WGMMA(N)                                                                                    \
  extern "C" __global__ void __launch_bounds__(128) clk_duty_wgmma_##N(long long ns, int fill, int kind,        \
                                                                       unsigned int seed, float* sink,          \
                                                                       long long* rec) {                        \
    extern __shared__ __align__(1024) unsigned char wsm[];                                                     \
    wg_fill(wsm, 2048 + 256 * 32, seed);                                                                       \
    const unsigned int a = smem_u32(wsm);                                                                     \
    const unsigned long long da = make_desc(a, 128, 256), db = make_desc(a + 2048, 128, 256);               \
    float d[128];                                                                                             \
    _Pragma("unroll") for (int i = 0; i < 128; ++i) d[i] = 0.0f;                                              \
    float x[8];                                                                                               \
    _Pragma("unroll") for (int c = 0; c < 8; ++c) x[c] = 0.5f + c * threadIdx.x;                              \
    __syncthreads();                                                                                          \
    const long long g0 = gtimer(), c0 = clock64();                                                            \
    long long g = g0, issued = 0;                                                                             \
    while (g - g0 < ns) {                                                                                     \
      WG_ROUND(N);                                                                                            \
      duty_filler(x, fill, kind);                                                                             \
      g = gtimer();                                                                                           \
    }                                                                                                         \
    duty_record(rec, c0, clock64(), g0, g, issued);                                                           \
    float s = 0.0f;                                                                                           \
    _Pragma("unroll") for (int i = 0; i < 128; ++i) s += d[i];                                                \
    _Pragma("unroll") for (int c = 0; c < 8; ++c) s += x[c];                                                  \
    if (s == 1234.5f) sink[0] = s;                                                                            \
  }
CLK_DUTY_WGMMA(1)
CLK_DUTY_WGMMA(2)
CLK_DUTY_WGMMA(4)
CLK_DUTY_WGMMA(8)
CLK_DUTY_WGMMA(16)
CLK_DUTY_WGMMA(64)

// FP32 alone (no wgmma): the filler only
extern "C" __global__ void __launch_bounds__(128) clk_duty_wgmma_0(long long ns, int fill, int kind,
                                                                   unsigned int seed, float* sink, long long* rec) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = 0.5f + c * threadIdx.x + seed;
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) {
    duty_filler(x, fill, kind);
    g = gtimer();
  }
  duty_record(rec, c0, clock64(), g0, g, 0);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[0] = s;
}
