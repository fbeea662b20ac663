// SMs that copy the same bytes from L2 at the same time (validate/micro/run_l2_merge.py, NVRTC sm_90a): does the L2
// serve such copies with fewer sector lookups, and faster, than copies of different bytes?
//
// One CTA per SM (grid = SM count, 32 threads, dynamic shared memory for `stages` buffers of `copy_bytes`). Thread 0
// keeps `stages` 1D bulk copies (cp.async.bulk global -> shared, completing on an mbarrier) in flight: `rounds`
// copies in all, copy r into buffer r % stages once that buffer's previous copy has landed. The CTAs form groups of
// `group`: CTA b is in group b / group (`spread` = 0: neighbours in launch order) or b % (grid / group) (`spread` =
// 1: members far apart in launch order). Copy r of a group reads chunk (r * groups + g) mod (region / copy_bytes) of
// `src`, so the members of a group read the same chunk at about the same time and different groups different
// chunks. CTAs with an odd index first wait `delay_ns` of %globaltimer, so that partners start that far apart.
// rec[4 * b + 0..3] = clock64 start, end, globaltimer start, end (thread 0).
static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// bounded spin: a wrong count shows as an absurd time, not a hung GPU
static __device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned ok = 0, tries = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!ok && ++tries < (1u << 26));
}
static __device__ __forceinline__ void bulk_g2s(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

#define MAX_STAGES 8

extern "C" __global__ void l2_merge(const char* __restrict__ src, unsigned long long region_bytes, int group,
                                    int spread, int stages, unsigned copy_bytes, long long rounds, long long* rec,
                                    long long delay_ns) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[MAX_STAGES];
  if (threadIdx.x != 0) return;
  const unsigned groups = gridDim.x / (unsigned)group;
  const unsigned g = spread ? blockIdx.x % groups : blockIdx.x / (unsigned)group;
  const unsigned long long chunks = region_bytes / copy_bytes;
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars);
  for (int s = 0; s < stages; ++s) mbar_init(bar0 + 8 * s, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  if (blockIdx.x & 1) {
    const long long w0 = gtimer();
    while (gtimer() - w0 < delay_ns) {
    }
  }
  const long long g0 = gtimer(), c0 = clock64();
  for (long long r = 0; r < rounds + stages; ++r) {
    const int s = (int)(r % stages);
    if (r >= stages) mbar_wait(bar0 + 8 * s, (unsigned)(((r - stages) / stages) & 1));  // its last copy landed
    if (r < rounds) {
      const unsigned long long chunk = ((unsigned long long)r * groups + g) % chunks;
      mbar_expect_tx(bar0 + 8 * s, copy_bytes);
      bulk_g2s(base + (unsigned)s * copy_bytes, src + chunk * copy_bytes, copy_bytes, bar0 + 8 * s);
    }
  }
  const long long c1 = clock64(), g1 = gtimer();
  long long* o = rec + 4 * blockIdx.x;
  o[0] = c0;
  o[1] = c1;
  o[2] = g0;
  o[3] = g1;
}
