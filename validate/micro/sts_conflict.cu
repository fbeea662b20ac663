// Bank-conflicted shared stores: their rate through the pipe, and a load-add-store chain on one word per lane (what
// a tree reduction or a Blelloch scan does between barriers). Lane l writes word (l % ways) * 32 + l / ways: `ways`
// distinct words of each bank it touches (1: conflict-free; 32: 32 words of one bank). run_sts_conflict.py.
#define UNROLL 16
// 1. rate: each active warp issues ITERS x 16 independent STS (volatile: none is merged); clock64 around them
extern "C" __global__ void sts_rate(int ways, int iters, int warps_active, long long* cycles, unsigned* sink) {
  __shared__ unsigned s[32 * 33];
  volatile unsigned* vs = s;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned off = (unsigned)((lane % ways) * 32 + (lane / ways));
  long long t0 = 0, t1 = 0;
  if (warp < warps_active) {
    t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) vs[off] = (unsigned)(it * UNROLL + u);
    }
    t1 = clock64();
  }
  __syncthreads();
  if (warp < warps_active && lane == 0) cycles[blockIdx.x * 32 + warp] = t1 - t0;
  if (warp == 0) sink[blockIdx.x * 32 + lane] = vs[off];
}

// 2. rmw: each active warp walks ITERS x 16 times s[off] = s[off] + 1 (each load waits for the previous store)
extern "C" __global__ void sts_rmw(int ways, int iters, int warps_active, long long* cycles, unsigned* sink) {
  __shared__ unsigned s[32 * 33];
  volatile unsigned* vs = s;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // each warp its own words when several walk (no two warps' lanes on one word): warps 0..31 use rows shifted by 0
  const unsigned off = (unsigned)((lane % ways) * 32 + (lane / ways));
  for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) s[i] = 0;
  __syncthreads();
  long long t0 = 0, t1 = 0;
  if (warp == 0 || (warp < warps_active)) {
    if (warp < warps_active) {
      t0 = clock64();
      for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) vs[off] = vs[off] + 1u;
      }
      t1 = clock64();
    }
  }
  __syncthreads();
  if (warp < warps_active && lane == 0) cycles[blockIdx.x * 32 + warp] = t1 - t0;
  if (warp == 0) sink[blockIdx.x * 32 + lane] = vs[off];
}
