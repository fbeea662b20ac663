// Instruction-cache micro-benchmark (driven by validate/micro/run_clocks.py, compiled once per body size with
// -DBODY=n): every warp runs `iters` passes over a straight-line body of BODY IMAD instructions over 8 registers
// (each reads a value written 5 instructions earlier, so one warp can issue about one per cycle when
// instructions arrive in time). When the body outgrows an
// instruction cache, every pass refetches it and the warps stall on no_instruction: cycles per instruction
// against body size shows the caches. rec per block: clock64 start, end.
#ifndef BODY
#define BODY 1024
#endif
// -DFFMA=1: the body is FFMAs instead (the same dependences; the FP32 pipe takes one a cycle per SMSP, so one warp
// asks for an instruction every cycle, twice the IMADs' rate).
#ifdef FFMA
typedef float word;
#define STEP(a, b) fmaf((a), 1.000001f, (b))
#else
typedef unsigned int word;
#define STEP(a, b) ((a) * 3u + (b))
#endif
// -DSTALL_EVERY=s (with FFMA): after every s-th FFMA a shared-memory load whose address the last FFMA gave, added
// into all 8 chains: each warp stalls on it (short_scoreboard, ~30 cycles) every s FFMAs, so whether the fetch goes
// on while a warp waits shows. -DSTALL_GLOBAL=1: the load is an L2 hit (ld.global.cg, ~300 cycles) instead.
extern "C" __global__ void ic_body(int iters, unsigned int seed, unsigned int* sink, long long* rec) {
  word x[8];
#if defined(STALL_EVERY) && !defined(STALL_GLOBAL)
  __shared__ float sm[32];
  if (threadIdx.x < 32) sm[threadIdx.x] = 0.0f;
#endif
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = (word)(seed + c * threadIdx.x);
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < BODY; ++i) {
      x[i & 7] = STEP(x[i & 7], x[(i + 3) & 7]);
#ifdef STALL_EVERY
      if (i % STALL_EVERY == STALL_EVERY - 1) {
#ifdef STALL_GLOBAL
        // an L2 hit instead (ld.global.cg: ~300 cycles): sink holds zeros
        const float v = __uint_as_float(__ldcg(&sink[__float_as_uint(x[i & 7]) & 3u]));
#else
        const float v = sm[__float_as_uint(x[i & 7]) & 31u];
#endif
#pragma unroll
        for (int c = 0; c < 8; ++c) x[c] += v;
      }
#endif
    }
  }
  const long long t1 = clock64();
  __syncthreads();
  if (threadIdx.x == 0) {
    rec[2 * blockIdx.x] = t0;
    rec[2 * blockIdx.x + 1] = t1;
  }
  word s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == (word)0x12345u) sink[0] = (unsigned int)s;
}
