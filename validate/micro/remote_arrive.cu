// What a CTA's arrival on its cluster partner's mbarrier costs in issued instructions (validate/micro/run_remote_arrive.py).
// hgemm_ws_cluster's smsp__inst_executed.sum runs 295 (512^3) and 2,912 (4096^3) a CTA over the sum of ncu's
// per-instruction counts, 18-23 for each of its SYNCS.ARRIVE.TRANS64.RED (validate/DEVIATIONS.md "2026-12-07 h").
// Clusters of two CTAs; thread 0 of each arrives `n` times on an mbarrier of the partner (remote = 1) or of its own
// CTA (remote = 0), never waiting (the barrier's count is large); ncu's smsp__inst_executed.sum against the SASS's
// instruction count says how many issues an arrival takes.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void __cluster_dims__(2, 1, 1) remote_arrive(int n, int remote, unsigned* sink) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(&bar)), "r"(1 << 20));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned target = smem_u32(&bar);
    if (remote) asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(target) : "r"(target), "r"(rank ^ 1u));
#pragma unroll 1
    for (int i = 0; i < n; ++i)
      asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];" :: "r"(target) : "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 1 && n < 0) sink[0] = rank;
}
