// L2 read rate by sectors and lines: every thread of a chip-filling grid loads 4 B (ld.global.cg, L1 bypassed)
// from an L2-resident buffer of N words at word (i * STRIDE) mod N for its i, over and over. STRIDE 1: a warp
// request is one line (4 sectors); 8: 8 lines, 32 sectors (each lane its own sector); 32: 32 lines, one sector
// each. Loads per thread per launch: REPS; 8 independent loads in flight per thread.
extern "C" __global__ void l2_sectors(const float* __restrict__ buf, long long n, int stride, int reps,
                                      float* sink) {
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long threads = (long long)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (int r = 0; r < reps; r += 8) {
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const long long i = ((tid + (long long)(r + k) * threads) * stride) % n;
      asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v[k]) : "l"(buf + i));
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += v[k];
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;
}
