// SM clock under load and start-up costs on the H100 (driven by validate/micro/run_clocks.py, compiled by CuPy's
// NVRTC for sm_90a). Each clock kernel keeps every SM busy with one pipe mix until `ns` nanoseconds of
// %globaltimer have passed, and thread 0 of each block records (clock64 start, end, globaltimer start, end,
// %smid): the block's SM clock is d(clock64) / d(globaltimer).
static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#include "clock_duty_common.cuh"  // mma_sync_x4
static __device__ __forceinline__ unsigned int smid() {
  unsigned int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
static __device__ __forceinline__ void put(long long* rec, long long c0, long long c1, long long g0, long long g1) {
  rec[0] = c0;
  rec[1] = c1;
  rec[2] = g0;
  rec[3] = g1;
  rec[4] = smid();
}

// FP32: 8 independent FFMA chains per thread
extern "C" __global__ void clk_ffma(long long ns, float a, float b, float* sink, long long* rec) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = a + c * threadIdx.x;
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) {
    for (int i = 0; i < 256; ++i) {
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
    }
    g = gtimer();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) put(rec + 5 * blockIdx.x, c0, c1, g0, g);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[0] = s;
}

// tensor: mma.sync m16n8k16 bf16 -> f32, 4 independent accumulators per warp, operands from a seed
extern "C" __global__ void clk_hmma(long long ns, unsigned int seed, float* sink, long long* rec) {
  const unsigned int a0 = seed ^ (threadIdx.x * 2654435761u), a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u,
                     b0 = a0 * 11u, b1 = a0 * 13u;
  float d[4][4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#pragma unroll
    for (int e = 0; e < 4; ++e) d[c][e] = 0.0f;
  }
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) {
    for (int i = 0; i < 64; ++i) mma_sync_x4(d, a0, a1, a2, a3, b0, b1);
    g = gtimer();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) put(rec + 5 * blockIdx.x, c0, c1, g0, g);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 4; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) sink[0] = s;
}

// memory: grid-stride float4 reads over a buffer larger than L2
extern "C" __global__ void clk_mem(long long ns, const float4* __restrict__ buf, long long n, float* sink,
                                   long long* rec) {
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  float s = 0.0f;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  while (g - g0 < ns) {
    for (int k = 0; k < 16; ++k) {
      float4 v = buf[i];
      s += v.x + v.w;
      i += step;
      if (i >= n) i -= n;
    }
    g = gtimer();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) put(rec + 5 * blockIdx.x, c0, c1, g0, g);
  if (s == 1234.5f) sink[0] = s;
}

// (nearly) idle: one warp per SM reading the timers
extern "C" __global__ void clk_idle(long long ns, long long* rec) {
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) g = gtimer();
  const long long c1 = clock64();
  if (threadIdx.x == 0) put(rec + 5 * blockIdx.x, c0, c1, g0, g);
}

// start-up: an empty kernel, and the same with a compile-time cluster of 2 and of 4 CTAs
extern "C" __global__ void st_empty() {}
extern "C" __global__ void __cluster_dims__(2, 1, 1) st_cluster2() {}
extern "C" __global__ void __cluster_dims__(4, 1, 1) st_cluster4() {}

// start-up inside a CTA: clock64 from entry to past __syncthreads, with thread 0 initialising `n` mbarriers
// (mbarrier.init + fence.mbarrier_init) first; rec per block: cycles
extern "C" __global__ void st_mbar(int n, long long* rec) {
  __shared__ __align__(8) unsigned long long bars[16];
  const long long c0 = clock64();
  if (threadIdx.x == 0) {
    for (int k = 0; k < n; ++k) {
      unsigned int a = (unsigned int)__cvta_generic_to_shared(&bars[k]);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(128));
    }
    if (n) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const long long c1 = clock64();
  if (threadIdx.x == 0) rec[blockIdx.x] = c1 - c0;
}

// kernel launch on the GPU: launch i records %globaltimer at entry; launched back to back from a CUDA graph, the
// gaps between entries are the GPU's cost of one more launch, free of the host's
extern "C" __global__ void st_stamp(long long* rec, int i) {
  if (threadIdx.x == 0) rec[i] = gtimer();
}
