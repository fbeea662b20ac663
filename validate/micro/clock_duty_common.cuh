// What the clock-duty kernels (clock_duty.cu, clock_duty_wgmma.cu, and l2_clock.cu's tensor warps) share: the
// mma.sync step, the filler between tensor rounds and thread 0's record. Include after a definition of gtimer().
#pragma once

// One mma.sync m16n8k16 bf16 -> f32 into each of 4 independent accumulators (operands from registers: only the
// tensor pipe's work matters)
static __device__ __forceinline__ void mma_sync_x4(float (&d)[4][4], unsigned a0, unsigned a1, unsigned a2,
                                                   unsigned a3, unsigned b0, unsigned b1) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

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
