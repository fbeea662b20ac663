// The SM clock against tensor activity (validate/micro/run_clock_duty.py): every SM runs tensor work in bursts
// separated by `gap` cycles of idle spinning, for `ns` ns of %globaltimer, so the tensor pipe is busy a chosen
// share of the time. Thread 0 of each block records (clock64 start, end, globaltimer start, end, tensor bursts):
// the clock is d(clock64) / d(globaltimer), the activity the bursts' FLOP over the cycles.
#include "hopper_common.cuh"

static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ void spin(long long cycles) {
  const long long t = clock64();
  while (clock64() - t < cycles) {
  }
}

// mma.sync m16n8k16 bf16 -> f32: a burst is 64 x 4 mma per warp (4 independent chains; 256 threads per block);
// each warp loops on its own, so rec[4] sums the bursts of all the block's warps
extern "C" __global__ void cd_hmma(long long ns, long long gap, unsigned int seed, float* sink, long long* rec) {
  const unsigned int a0 = seed ^ (threadIdx.x * 2654435761u), a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u,
                     b0 = a0 * 11u, b1 = a0 * 13u;
  float d[4][4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#pragma unroll
    for (int e = 0; e < 4; ++e) d[c][e] = 0.0f;
  }
  long long bursts = 0;
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  while (g - g0 < ns) {
    for (int i = 0; i < 64; ++i) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    ++bursts;
    if (gap) spin(gap);
    g = gtimer();
  }
  const long long c1 = clock64();
  long long* r = rec + 5 * blockIdx.x;
  if ((threadIdx.x & 31) == 0) atomicAdd((unsigned long long*)(r + 4), (unsigned long long)bursts);  // every warp's
  if (threadIdx.x == 0) {
    r[0] = c0; r[1] = c1; r[2] = g0; r[3] = g;
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 4; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) sink[0] = s;
}

// wgmma m64n256k16 bf16 -> f32, one warpgroup per block: a burst is 8 wgmma, commit, wait_group 0
extern "C" __global__ void __launch_bounds__(128) cd_wgmma(long long ns, long long gap, float* sink, long long* rec) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  const unsigned long long da = wg_desc(base), db = wg_desc(base + 8192);
  __shared__ int go;  // the warpgroup's loop decision, from thread 0: wgmma needs all four warps together
  long long bursts = 0;
  const long long g0 = gtimer(), c0 = clock64();
  long long g = g0;
  for (;;) {
    if (threadIdx.x == 0) go = g - g0 < ns;
    __syncthreads();
    if (!go) break;
    __syncthreads();
    wg_fence();
#pragma unroll
    for (int u = 0; u < 8; ++u) wgmma_m64n256k16(acc, da, db);
    wg_commit();
    wg_wait0();
    ++bursts;
    if (gap) spin(gap);
    g = gtimer();
  }
  const long long c1 = clock64();
  if (threadIdx.x == 0) {
    long long* r = rec + 5 * blockIdx.x;
    r[0] = c0; r[1] = c1; r[2] = g0; r[3] = g; r[4] = bursts;
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += acc[i];
  if (s == 1234.5f) sink[0] = s;
#else
  if (threadIdx.x == 0) rec[5 * blockIdx.x + 4] = -1;  // built without sm_90a: no wgmma
#endif
}
