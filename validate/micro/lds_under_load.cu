// Does a shared load wait behind the SM's global loads? And where does a warp wait for __syncthreads on Hopper?
// (validate/micro/run_lds_under_load.py; the reductions' levels take 3-5x longer with 8 CTAs an SM than alone:
// reducelevels-2026-12-07.json.)
// lds_chain: warp 0 of each CTA chases a pointer ring through shared memory (each LDS waits for the last), CHAIN
// links, and records its cycles; warps 1..: MODE 0 exit at once; 1 stream global loads that miss (a 1 GiB buffer, 8
// independent 16-B loads in flight a warp, INFLIGHT); 2 stream global loads that hit the L1 (a 4 KiB window); 3
// stream conflict-free shared loads (INFLIGHT in flight). Warp 0 waits for the others to start (a flag in shared memory).
// bar_defer: warp 1 spins DELAY cycles, then every warp meets at __syncthreads; warp 0 records clocks before the
// barrier, right after it, after 16 dependent integer adds, and after a shared load that follows.
#ifndef CHAIN
#define CHAIN 1024
#endif
#ifndef INFLIGHT  // global (or shared) loads each other warp keeps in flight (the sweep: 1, 2, 4, 8)
#define INFLIGHT 8
#endif
extern "C" __global__ void lds_chain(const int4* __restrict__ big, unsigned long long mask, int mode, int rounds,
                                     unsigned* out, int* sink) {
  __shared__ unsigned ring[1024];
  __shared__ volatile int started;
  const int t = threadIdx.x, w = t >> 5;
  for (int i = t; i < 1024; i += blockDim.x) ring[i] = (i * 33 + 1) & 1023;  // a ring over all banks
  if (t == 0) started = 0;
  __syncthreads();
  if (w == 0) {
    while (mode != 0 && started < (int)(blockDim.x / 32 - 1)) { }
    unsigned p = t & 1023;
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < CHAIN; ++i) p = ring[p];
    long long t1 = clock64();
    if (t == 0) out[blockIdx.x] = (unsigned)(t1 - t0);
    if (p == 0xffffffffu) sink[0] = p;
    return;
  }
  if ((t & 31) == 0) atomicAdd((int*)&started, 1);
  if (mode == 0) return;
  int4 acc = make_int4(0, 0, 0, 0);
  unsigned long long base = ((unsigned long long)blockIdx.x * 977 + w * 131) * 256;
  unsigned q = t;
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    if (mode == 3) {
#pragma unroll
      for (int k = 0; k < INFLIGHT; ++k) q += ring[(q + k * 32) & 1023];
      continue;
    }
#pragma unroll
    for (int k = 0; k < INFLIGHT; ++k) {
      unsigned long long i = mode == 1 ? ((base + (unsigned long long)(r * INFLIGHT + k) * 512 + (t & 31)) & mask)
                                       : ((unsigned long long)(k * 32 + (t & 31)) & 255);
      int4 v = big[i];
      acc.x += v.x; acc.y ^= v.y;
    }
  }
  if (acc.x == 0x7fffffff || q == 0xffffffffu) sink[1] = acc.y + q;
}

extern "C" __global__ void bar_defer(int delay, unsigned* out, int* sink) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  s[t] = t;
  if (t / 32 == 1) {
    long long e = clock64() + delay;
    while (clock64() < e) { }
  }
  __syncwarp();
  long long c0 = clock64();
  __syncthreads();
  long long c1 = clock64();
  int v = t;
#pragma unroll
  for (int i = 0; i < 16; ++i) asm volatile("add.s32 %0, %0, 1;" : "+r"(v));
  long long c2 = clock64();
  int x = s[(t + v) & 255];
  asm volatile("" :: "r"(x));
  int y = x + 1;
  asm volatile("" :: "r"(y));
  long long c3 = clock64();
  if (t == 0) { out[0] = (unsigned)(c1 - c0); out[1] = (unsigned)(c2 - c0); out[2] = (unsigned)(c3 - c0); }
  if (y == -5) sink[0] = y;
}
