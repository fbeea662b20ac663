// What a TMA kernel pays to start (validate/micro/run_tma_start.py): kernels that do nothing, only set up an
// mbarrier, or also issue 1 or 8 TMA 2D loads of a 64 x 64 bf16 box (128B swizzle) one after another and wait
// for each; one 128-thread CTA per SM (120 KiB of dynamic shared memory). Thread 0 of each CTA records clock64 at
// entry, after the set-up, and after each load has landed (rec[0..10]).
#define HANG_CYCLES 400000000LL
#include "hopper_common.cuh"

#define REC 11

extern "C" __global__ void ts_empty(long long* rec) {
  if (threadIdx.x == 0) rec[REC * blockIdx.x] = clock64();
}

extern "C" __global__ void ts_mbar(long long* rec) {
  __shared__ __align__(8) unsigned long long bar;
  const long long t0 = clock64();
  if (threadIdx.x == 0) {
    mbar_init(smem_u32(&bar), 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    rec[REC * blockIdx.x] = t0;
    rec[REC * blockIdx.x + 1] = clock64();
  }
}

extern "C" __global__ void ts_tma(TMAP_ARG(tm), int loads, int prefetch, long long* rec) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const long long t0 = clock64();
  const unsigned int b = smem_u32(&bar);
  if (threadIdx.x == 0) {
    if (prefetch) tma_prefetch_map(TMAP_ADDR(tm));
    mbar_init(b, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long* r = rec + REC * blockIdx.x;
    r[0] = t0;
    r[1] = clock64();
    for (int i = 0; i < loads; ++i) {
      mbar_arrive_expect_tx(b, 64 * 64 * 2);
      tma_load_2d(base, TMAP_ADDR(tm), 0, (int)((blockIdx.x * 8 + i) % 512) * 64, b);
      mbar_wait(b, (unsigned int)(i & 1));
      r[2 + i] = clock64();
    }
  }
  __syncthreads();
}
