// mbarrier polling (driven by validate/micro/run_clocks.py; NVRTC for sm_90a with -I validate/kernels): how many
// times the twins' wait loop (mbar_wait of validate/kernels/hopper_common.cuh, with the trap counter) polls
// while it waits. One CTA per SM of 1 + `waiters` warps: warp 0's lane 0 spins `delay` cycles of clock64 and then
// arrives on an mbarrier (count 1); every lane of the other warps waits on it with the twins' loop, counting its
// polls. rec per block: [polls of warp 1 lane 0, cycles warp 1 waited].
#include "hopper_common.cuh"

extern "C" __global__ void poll_wait(long long delay, long long* rec) {
  __shared__ __align__(8) unsigned long long bar;
  const unsigned int b = (unsigned int)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      const long long t0 = clock64();
      while (clock64() - t0 < delay) {
      }
      mbar_arrive(b);
    }
    return;
  }
  const long long t0 = clock64();
  long long polls = 1;
  if (!mbar_try(b, 0)) {
    const long long c0 = clock64();
    while (!mbar_try(b, 0)) {
      ++polls;
      if (clock64() - c0 > HANG_CYCLES) __trap();
    }
  }
  const long long t1 = clock64();
  if (threadIdx.x == 32) {
    rec[2 * blockIdx.x] = polls;
    rec[2 * blockIdx.x + 1] = t1 - t0;
  }
}
