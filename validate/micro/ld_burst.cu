// How long a CTA's burst of 16-B global loads takes with no contention: hgemm_mma_swizzled at 512^3 (16 CTAs alone
// on an idle chip) waits about 2000 cycles per k-tile for its loads, the model about 800. One CTA of 256 threads per
// SM, ROUNDS rounds; in round r every thread loads NLOAD 16-B chunks of a tile of NLOAD*32 rows x 128 B, row pitch
// PITCH bytes, at column offset r*128 B (the next k-tile: new lines, next to the last round's), stores them to shared
// memory (LDG -> STS, as hgemm_mma_swizzled stages its k-tile), and the CTA meets at a barrier. Thread 0 reads
// clock64 before the loads and after the barrier: cycles per round. NLOAD is a compile-time constant (the loads
// unrolled); ptxas interleaves loads and stores as it does in the twin, so a store waits for its load before the
// next loads issue.
#ifndef NLOAD
#define NLOAD 8
#endif
extern "C" __global__ void ld_burst(const char* __restrict__ src, long long region, long long pitch, int rounds,
                                    float* sink, long long* cycles) {
  extern __shared__ float4 tile[];  // NLOAD * 256 chunks of 16 B, as the twin stages its k-tile (LDG -> STS)
  const char* base = src + blockIdx.x * region;
  for (int r = 0; r < rounds; ++r) {
    long long t0 = clock64();
    float4 v[NLOAD];
#pragma unroll
    for (int i = 0; i < NLOAD; ++i) {
      const int c = threadIdx.x + 256 * i;
      v[i] = *reinterpret_cast<const float4*>(base + (c / 8) * pitch + (long long)r * 128 + (c % 8) * 16);
    }
#pragma unroll
    for (int i = 0; i < NLOAD; ++i) tile[threadIdx.x + 256 * i] = v[i];
    __syncthreads();
    if (threadIdx.x == 0) cycles[(long long)blockIdx.x * rounds + r] = clock64() - t0;
  }
  if (tile[threadIdx.x].x == 1234.5f) sink[threadIdx.x] = 1.f;
}
