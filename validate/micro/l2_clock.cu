// The L2's clock against the SM's (validate/micro/run_l2_clock.py, NVRTC sm_90a): does the L2's bandwidth stay the
// same in bytes per second when the SM clock falls, or in bytes per SM cycle?
//
// One CTA per SM (grid = SM count; 120 KiB of dynamic shared memory keeps a second CTA off). Warps 0..loaders-1 stream
// float4 with ld.global.cg (L1 bypassed; coalesced, grid-strided over the loader lanes, wrapping around the buffer):
// `batches` batches of 32 loads each (4 groups of 8 independent loads), a fixed amount of work. Warps loaders.. run
// mma.sync m16n8k16 bf16 (4 independent accumulators, 16 per round) until the loaders are done: tensor work that
// lowers the SM clock (validate/micro/RESULTS.md, clock against tensor activity) without touching memory.
// Thread 0 records (clock64, %globaltimer) when every warp has started and again when every loader has finished
// (named barrier 1 over the loaders), then raises the stop flag for the mma warps. rec[4 * block + 0..3] = clock64
// start, end, globaltimer start, end. With `group` > 1 (run_l2_merge.py --lsu) the CTAs form groups of `group` that
// stream the same addresses at about the same pace: CTA b is in group b / group (`spread` = 0) or b % (grid / group)
// (`spread` = 1), and the stream's grid stride counts groups, not CTAs.
#include "stream_common.cuh"
#include "clock_duty_common.cuh"

extern "C" __global__ void __launch_bounds__(1024, 1)
l2_clock(const float4* __restrict__ stream, unsigned n_vec, int loaders, long long batches, unsigned seed,
         long long* rec, float* sink, int group, int spread) {
  __shared__ volatile int stop;
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) stop = 0;
  __syncthreads();
  long long c0 = 0, g0 = 0;
  if (threadIdx.x == 0) {
    g0 = gtimer();
    c0 = clock64();
  }
  float acc = 0.f;
  if (warp < (unsigned)loaders) {  // ---------------------------------------------------------------- the stream
    const unsigned groups = gridDim.x / (unsigned)group;
    const unsigned g = spread ? blockIdx.x % groups : blockIdx.x / (unsigned)group;
    const unsigned stride = groups * (unsigned)loaders * 32u;  // the host keeps stride <= n_vec
    unsigned i = ((g * (unsigned)loaders + warp) * 32u + lane) % n_vec;
    for (long long b = 0; b < batches; ++b) stream_batch(stream, i, stride, n_vec, acc);
    asm volatile("bar.sync 1, %0;" ::"r"(loaders * 32) : "memory");
    if (threadIdx.x == 0) {
      const long long c1 = clock64(), g1 = gtimer();
      stop = 1;
      long long* r = rec + 4 * blockIdx.x;
      r[0] = c0;
      r[1] = c1;
      r[2] = g0;
      r[3] = g1;
    }
  } else {  // ------------------------------------------------------------------------------- tensor work beside it
    const unsigned a0 = seed ^ (threadIdx.x * 2654435761u), a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u,
                   b0 = a0 * 11u, b1 = a0 * 13u;
    float d[4][4];
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) d[c][e] = 0.f;
    while (!stop) {
#pragma unroll
      for (int r = 0; r < 4; ++r) mma_sync_x4(d, a0, a1, a2, a3, b0, b1);
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) acc += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  }
  if (acc == 12345.678f) sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;  // keeps the work, never true
}
