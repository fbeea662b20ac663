// gpusim-twin: kernels_ir/hgemm.py::hgemm_ws_cluster
// C (M x N, bf16) = A (M x K, bf16, row-major) * B^T, B N x K row-major ("TN"); fp32 accumulation.
// TC_DESIGNS.md "Hopper GEMMs": as hgemm_ws (BM = 128, BN = bn, BK = 64, 384 threads: producer WG0 with
// setmaxnreg.dec 40, consumer WG1/WG2 with setmaxnreg.inc 232, an S-stage ring with full/empty mbarriers),
// plus a thread-block cluster of 2 x 1 x 1 along M (__cluster_dims__, so a plain launch forms the clusters):
// grid = (M/BM, N/BN) with blockIdx.x walking M, so the two CTAs of a cluster (ranks 0 and 1) are adjacent M
// tiles of the same N column and need the same B tile. Each producer loads its own A tile (128 x 64, local)
// and half of the B tile (rows rank*BN/2 .. +BN/2 of it) with cp.async.bulk.tensor ... .multicast::cluster to
// both CTAs: each CTA's full[s] receives A + both B halves = (128 + BN) * 128 bytes, the count its own
// producer expects. A slot is free when the consumers of BOTH CTAs have released it (the partner's producer
// writes into it too): empty[s] counts 4 arrivals, and one thread of each consumer warpgroup arrives on
// empty[s] of both CTAs (its own, and the partner's through mapa + mbarrier.arrive.shared::cluster with the
// default .release.cta semantics, as CUTLASS's ClusterBarrier does; with .release.cluster the kernel ran at
// 434 us instead of 208 us at 4096^3 on the H100: a fence on the consumers' path, measurements/h100/
// hopper-gemm-2026-11-22.json). Barrier initialisation is published with
// fence.mbarrier_init + a cluster barrier before any copy; a final cluster barrier keeps each CTA's shared
// memory alive until the partner's last remote arrivals are done.
// Knobs: -DSTAGES (default 3), -DBN (128/256, default 256), -DSWIZZLE (32/64/128, default 128).
// Diagnostic switches (not design knobs; the defaults are the design): -DARRIVE_CLUSTER_SCOPE=1 makes the
// partner arrive .release.cluster; -DMULTICAST=0 makes each producer load the whole B tile itself, locally
// (B map box {SWIZZLE/2, BN}), keeping the cluster-wide empty barriers.
// Shared memory: STAGES * (128 + BN) * 128 B (+ 1 KiB alignment slack + barriers).
// Tensor maps: A dims {K, M} box {SWIZZLE/2, 128}; B dims {K, N} box {SWIZZLE/2, BN/2}.
// Needs M % 256 (two M tiles per cluster), N % BN, K % 64 == 0.
#include "hopper_common.cuh"

#ifndef STAGES
#define STAGES 3
#endif
#ifndef BN
#define BN 256
#endif
#if BN != 128 && BN != 256
#error "BN must be 128 or 256"
#endif
#define WS_BM 128
#define WS_TILE_A (WS_BM * 128)
#define WS_STAGE_BYTES ((WS_BM + BN) * 128)
#if STAGES < 1 || STAGES * WS_STAGE_BYTES + 1024 + 128 > 227 * 1024
#error "STAGES * (128 + BN) * 128 B of shared memory exceeds 227 KiB"
#endif
#define NACC (BN / 2)
#ifndef ARRIVE_CLUSTER_SCOPE
#define ARRIVE_CLUSTER_SCOPE 0
#endif
#ifndef MULTICAST
#define MULTICAST 1
#endif

static __device__ __forceinline__ void wgmma_tile(float (&acc)[NACC], unsigned long long da,
                                                  unsigned long long db) {
#if BN == 256
  wgmma_m64n256k16(acc, da, db);
#else
  wgmma_m64n128k16(acc, da, db);
#endif
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    hgemm_ws_cluster(TMAP_ARG(tmA), TMAP_ARG(tmB), bf16_t* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned int full = base + STAGES * WS_STAGE_BYTES;  // full[s] = full + 8 s
  const unsigned int empty = full + 8 * STAGES;              // empty[s] = empty + 8 s
  const int m0 = blockIdx.x * WS_BM, n0 = blockIdx.y * BN;
  const int KT = K / 64;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const unsigned int rank = cluster_ctarank();
  const unsigned long long mapA = TMAP_ADDR(tmA), mapB = TMAP_ADDR(tmB);

  if (threadIdx.x == 0) {
    tma_prefetch_map(mapA);
    tma_prefetch_map(mapB);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, 4);
    }
    fence_mbar_init();
  }
  cluster_sync();  // both CTAs' barriers are initialised before anyone copies or arrives remotely

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + 8 * s, (unsigned int)(kt / STAGES - 1) & 1u);
        const unsigned int a = base + s * WS_STAGE_BYTES, b = a + WS_TILE_A, bar = full + 8 * s;
        mbar_arrive_expect_tx(bar, WS_STAGE_BYTES);
        tma_load_panel(a, WS_BM, 0, mapA, kt * 64, m0, WS_BM, bar);
#if MULTICAST
        tma_load_panel_mc(b, BN, (int)rank * (BN / 2), mapB, kt * 64, n0 + (int)rank * (BN / 2), BN / 2, bar,
                          (unsigned short)0x3);
#else
        tma_load_panel(b, BN, 0, mapB, kt * 64, n0, BN, bar);
#endif
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int r0 = (wg - 1) * 64;
    float acc[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % STAGES;
      const unsigned int a = base + s * WS_STAGE_BYTES, b = a + WS_TILE_A;
      mbar_wait(full + 8 * s, (unsigned int)(kt / STAGES) & 1u);
      wg_fence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
        wgmma_tile(acc, wg_desc(kslice_addr(a, WS_BM, r0, ks)), wg_desc(kslice_addr(b, BN, 0, ks)));
      wg_commit();
      wg_wait0();
      if (t == 0) {
#if ARRIVE_CLUSTER_SCOPE
        mbar_arrive_cluster(empty + 8 * s, rank);
        mbar_arrive_cluster(empty + 8 * s, rank ^ 1u);
#else
        mbar_arrive(empty + 8 * s);                    // this CTA's slot
        mbar_arrive_remote(empty + 8 * s, rank ^ 1u);  // the partner's
#endif
      }
    }
    store_acc_bf16<NACC>(acc, C, N, m0 + r0, n0, t);
  }
  __syncwarp();
  cluster_sync();  // no CTA leaves while its partner may still arrive on its barriers
}
