// Latency of a bank-conflicted shared load: one warp walks a chain of dependent LDS (each address holds the next
// offset) whose 32 lanes fall in `ways` distinct words of one bank (ways = 1: all lanes in 32 banks, conflict-free;
// ways = 32: 32 words of one bank). run_lds_conflict_chain.py; clock64 around ITERS x 16 loads of one warp.
#define UNROLL 16
extern "C" __global__ void lds_chain(int ways, int iters, int warps_active, long long* cycles, unsigned* sink) {
  __shared__ unsigned s[32 * 33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // lane l reads word w(l) = (l % ways) * 32 + l / ways * (ways < 32): `ways` words in bank (l / ways) ... all in
  // one bank when ways = 32; a word holds its own offset, so each load's address is the previous load's value
  for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) s[i] = i;
  __syncthreads();
  unsigned off = (unsigned)((lane % ways) * 32 + (lane / ways));
  unsigned v = off;
  long long t0 = 0, t1 = 0;
  if (warp < warps_active) {
    t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) v = s[v];
    }
    t1 = clock64();
  }
  __syncthreads();
  if (warp < warps_active && lane == 0) cycles[blockIdx.x * 32 + warp] = t1 - t0;
  sink[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
