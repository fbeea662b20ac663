// gpusim-twin: kernels_ir/hgemm.py::hgemm_ws
// C (M x N, bf16) = A (M x K, bf16, row-major) * B^T, B N x K row-major ("TN"); fp32 accumulation.
// TC_DESIGNS.md "Hopper GEMMs", warp-specialised: BM = 128, BN = bn (128 or 256), BK = 64, 384 threads = 3
// warpgroups, grid = (N/BN, M/BM) (blockIdx.x walks N).
// WG0 = producer: setmaxnreg.dec 40; thread 0 alone issues, for k-tile kt, into slot s = kt % STAGES: wait
//   empty[s] (from the second round on), mbarrier.arrive.expect_tx(full[s], (128 + BN) * 128 B), TMA of the A
//   tile (128 x 64) and of the B tile (BN n x 64 k). The other producer threads go straight to the end.
// WG1, WG2 = consumers: setmaxnreg.inc 232; WG c owns rows 64(c-1) .. 64(c-1)+63 x BN: per k-tile wait full[s],
//   4 x wgmma.mma_async.m64n{BN}k16 (A and B from shared-memory descriptors), commit_group, wait_group 0,
//   then one thread of the warpgroup arrives on empty[s] (empty barriers count 2 arrivals).
// Epilogue: direct 4-byte bf16-pair stores of the accumulators.
// Knobs: -DSTAGES (default 3), -DBN (128/256, default 256), -DSWIZZLE (32/64/128, default 128).
// Shared memory (dynamic): STAGES * (128 + BN) * 128 B (+ 1 KiB alignment slack + barriers); > 227 KiB is
// refused at compile time. Tensor maps: A dims {K, M} box {SWIZZLE/2, 128}; B dims {K, N} box {SWIZZLE/2, BN}.
// Needs M % 128, N % BN, K % 64 == 0.
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

static __device__ __forceinline__ void wgmma_tile(float (&acc)[NACC], unsigned long long da,
                                                  unsigned long long db) {
#if BN == 256
  wgmma_m64n256k16(acc, da, db);
#else
  wgmma_m64n128k16(acc, da, db);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
    hgemm_ws(TMAP_ARG(tmA), TMAP_ARG(tmB), bf16_t* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned int full = base + STAGES * WS_STAGE_BYTES;  // full[s] = full + 8 s
  const unsigned int empty = full + 8 * STAGES;              // empty[s] = empty + 8 s
  const int n0 = blockIdx.x * BN, m0 = blockIdx.y * WS_BM;
  const int KT = K / 64;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const unsigned long long mapA = TMAP_ADDR(tmA), mapB = TMAP_ADDR(tmB);

  if (threadIdx.x == 0) {
    tma_prefetch_map(mapA);
    tma_prefetch_map(mapB);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, 2);
    }
    fence_mbar_init();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + 8 * s, (unsigned int)(kt / STAGES - 1) & 1u);
        const unsigned int a = base + s * WS_STAGE_BYTES, b = a + WS_TILE_A, bar = full + 8 * s;
        mbar_arrive_expect_tx(bar, WS_STAGE_BYTES);
        tma_load_panel(a, WS_BM, 0, mapA, kt * 64, m0, WS_BM, bar);
        tma_load_panel(b, BN, 0, mapB, kt * 64, n0, BN, bar);
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
      if (t == 0) mbar_arrive(empty + 8 * s);
    }
    store_acc_bf16<NACC>(acc, C, N, m0 + r0, n0, t);
  }
}
