// The spread of one load's latency (validate/micro/run_latdist.py): one thread chases a pointer ring through a buffer
// (each hop a random 128-B line of it: L2-resident at 16 MiB, from HBM at 1 GiB) and records every hop's clock64
// cycles. The model's latencies are one number per level; a spread lets CTAs that start together drift apart.
extern "C" __global__ void chase(const unsigned int* __restrict__ next, unsigned int start, int hops,
                                 unsigned int* out_cycles, unsigned int* sink) {
  unsigned int p = start;
  for (int i = 0; i < hops; ++i) {
    long long t0 = clock64();
    unsigned int q;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(q) : "l"(next + p) : "memory");
    p = q;
    asm volatile("" :: "r"(p));
    long long t1 = clock64();
    out_cycles[i] = (unsigned int)(t1 - t0);
  }
  sink[0] = p;
}
