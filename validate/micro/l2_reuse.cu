// How much of a buffer read again and again stays in the H100's L2? Every thread of a chip-filling grid reads its
// share of an N-word buffer (16-B ld.global.cg, L1 bypassed), PASSES times. ROTATE = 0: each pass reads the same
// lines from the same SM; ROTATE = 1: each pass shifts the mapping by a prime number of CTAs, so that over the
// passes every line is read by SMs of both L2 partitions. ncu's dram__bytes_read over N * 16 * PASSES bytes
// gives the share that missed.
extern "C" __global__ void l2_reuse(const float4* __restrict__ buf, long long n, int passes, int rotate,
                                    float* sink) {
  const long long threads = (long long)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (int p = 0; p < passes; ++p) {
    const long long cta = rotate ? (blockIdx.x + (long long)p * 97) % gridDim.x : blockIdx.x;
    for (long long i = cta * blockDim.x + threadIdx.x; i < n; i += threads) {
      float4 v;
      asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "l"(buf + i));
      acc += v.x + v.y + v.z + v.w;
    }
    __syncthreads();
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;
}
