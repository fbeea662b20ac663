// What __threadfence() costs a warp: a store, a fence, or both, `rounds` times; clock64 around the loop per warp.
// mode bit 0: store x[t] = r (each thread its own word); bit 1: __threadfence() after it. `active` threads of each
// CTA take part (1: thread 0 alone, as a threadfence reduction's; blockDim.x: every thread).
extern "C" __global__ void fence_loop(unsigned* __restrict__ x, long long* __restrict__ cycles, int mode, int active,
                                      int rounds) {
  const int t = threadIdx.x;
  const long long g = (long long)blockIdx.x * blockDim.x + t;
  long long start = clock64();
  if (t < active) {
    for (int r = 0; r < rounds; ++r) {
      if (mode & 1) x[g] = r;
      if (mode & 2) __threadfence();
      asm volatile("" ::: "memory");
    }
  }
  long long end = clock64();
  if (t % 32 == 0) cycles[g / 32] = end - start;
}
