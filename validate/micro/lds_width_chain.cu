// Latency of a shared load by its width (validate/micro/run_lds_width_chain.py): one warp walks a chain of dependent
// LDS.32 / LDS.64 / LDS.128 (WIDTH 4 / 8 / 16 bytes a lane), each load's first word the next load's offset, the
// other words folded into it through a mask the compiler cannot see (zero at run time), so no load is narrowed.
// Lane l reads its own 16-B slot l (conflict-free at every width). clock64 around ITERS x 16 loads.
#ifndef WIDTH
#define WIDTH 4
#endif
#define UNROLL 16
extern "C" __global__ void lds_width(int iters, unsigned zero, long long* cycles, unsigned* sink) {
  __shared__ __align__(16) unsigned s[32 * 4];
  const int lane = threadIdx.x & 31;
  for (int i = threadIdx.x; i < 32 * 4; i += blockDim.x) s[i] = (unsigned)((i / 4) * 4);  // slot l -> word 4l
  __syncthreads();
  unsigned v = (unsigned)(lane * 4);
  long long t0 = 0, t1 = 0;
  if (threadIdx.x < 32) {
    t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
#if WIDTH == 16
        const uint4 x = *reinterpret_cast<const uint4*>(&s[v]);
        v = x.x + ((x.y ^ x.z ^ x.w) & zero);
#elif WIDTH == 8
        const uint2 x = *reinterpret_cast<const uint2*>(&s[v]);
        v = x.x + (x.y & zero);
#else
        v = s[v];
#endif
      }
    }
    t1 = clock64();
  }
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (threadIdx.x < 32) sink[blockIdx.x * 32 + lane] = v;
}
