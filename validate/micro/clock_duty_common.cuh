// What the clock-duty kernels (clock_duty.cu, clock_duty_wgmma.cu) share: the filler between tensor rounds and
// thread 0's record. Include after a definition of gtimer().
#pragma once

// `fill` steps of 8 independent FFMAs per thread (kind 0) or of __nanosleep(32) (kind 1, the SM mostly idle)
static __device__ __forceinline__ void duty_filler(float (&x)[8], int fill, int kind) {
  for (int i = 0; i < fill; ++i) {
    if (kind == 0) {
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], 0.999f, 0.001f);
    } else {
      __nanosleep(32);
    }
  }
}

// thread 0: (clock64 start, end, globaltimer start, end, tensor instructions issued by its warp)
static __device__ __forceinline__ void duty_record(long long* rec, long long c0, long long c1, long long g0,
                                                   long long g1, long long issued) {
  if (threadIdx.x == 0) {
    long long* r = rec + 5 * blockIdx.x;
    r[0] = c0;
    r[1] = c1;
    r[2] = g0;
    r[3] = g1;
    r[4] = issued;
  }
}
