// What one 2D TMA tensor store (cp.async.bulk.tensor.2d.global.shared::cta.bulk_group) costs on the H100: the
// issuing thread's time, the wait for its bulk group to have read the box out of shared memory
// (cp.async.bulk.wait_group.read), and the wait for the writes to complete (wait_group), against the box size; and
// how many bytes a second all SMs store. Driven by validate/micro/run_tma_store.py (NVRTC for sm_90a with
// -I validate/kernels; the tensor map from validate/tma.py, passed by value as the twins pass theirs).
//
// tma_store: one CTA of 128 threads per SM (or one CTA alone); thread 0 fills a box of shared memory once, then
// stores it n times to boxes at new rows of the tensor (CTA b's f-th store to band (b + f * gridDim.x) % nbands),
// leaving at most PENDING bulk groups unread after each (PENDING 0: each store waits for its box to be read, its
// latency; 7: eight in flight, the throughput). Timing record per CTA (REC long longs): [0] clock64 before the first store, [1] after the
// last store's wait_group.read 0, [2] after wait_group 0, [3] %globaltimer at [0], [4] at [2], [5] %smid,
// [6] the sum of clock64 cycles around each store instruction (issue, clock reads included).
#include "hopper_common.cuh"

#define REC 8
#ifndef PENDING
#define PENDING 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void __launch_bounds__(128, 1)
    tma_store(TMAP_ARG(tmap), int n, int box_rows, int nbands, long long* __restrict__ rec) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const int box_bytes = box_rows * 128;
  for (int i = threadIdx.x * 16; i < box_bytes; i += blockDim.x * 16)
    *reinterpret_cast<int4*>(smem_raw + i) = make_int4(i, blockIdx.x, i + 1, 7);
  fence_proxy_async();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned long long map = TMAP_ADDR(tmap);
  tma_prefetch_map(map);
  const unsigned int src = smem_u32(smem_raw);
  const int G = (int)gridDim.x;
  int band = (int)blockIdx.x % nbands;
  const int step = G % nbands;
  long long issue = 0;
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int f = 0; f < n; ++f) {
    const long long a = clock64();
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 :: "l"(map), "r"(src), "r"(0), "r"(band * box_rows) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    issue += clock64() - a;
    asm volatile("cp.async.bulk.wait_group.read " STR(PENDING) ";" ::: "memory");
    band += step;
    if (band >= nbands) band -= nbands;
  }
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  const long long t1 = clock64();
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  const long long t2 = clock64();
  const long long g1 = gtimer();
  unsigned int sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  long long* r = rec + (long long)blockIdx.x * REC;
  r[0] = t0; r[1] = t1; r[2] = t2; r[3] = g0; r[4] = g1; r[5] = sm; r[6] = issue; r[7] = 0;
}
