// Instruction-cache micro-benchmark (driven by validate/micro/run_clocks.py, compiled once per body size with
// -DBODY=n): every warp runs `iters` passes over a straight-line body of BODY IMAD instructions over 8 registers
// (each reads a value written 5 instructions earlier, so one warp can issue about one per cycle when
// instructions arrive in time). When the body outgrows an
// instruction cache, every pass refetches it and the warps stall on no_instruction: cycles per instruction
// against body size shows the caches. rec per block: clock64 start, end.
#ifndef BODY
#define BODY 1024
#endif
extern "C" __global__ void ic_body(int iters, unsigned int seed, unsigned int* sink, long long* rec) {
  unsigned int x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = seed + c * threadIdx.x;
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < BODY; ++i) x[i & 7] = x[i & 7] * 3u + x[(i + 3) & 7];
  }
  const long long t1 = clock64();
  __syncthreads();
  if (threadIdx.x == 0) {
    rec[2 * blockIdx.x] = t0;
    rec[2 * blockIdx.x + 1] = t1;
  }
  unsigned int s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 0x12345u) sink[0] = s;
}
