// gpusim-twin: kernels_ir/hgemm.py::hgemm_persistent
// C (M x N, bf16) = A (M x K, bf16, row-major) * B^T, B N x K row-major ("TN"); fp32 accumulation.
// TC_DESIGNS.md "Hopper GEMMs": as hgemm_ws (BM = 128, BN = bn, BK = 64, 384 threads: producer WG0 with
// setmaxnreg.dec 40, consumers WG1/WG2 with setmaxnreg.inc 232 owning 64 rows each, an S-stage ring with
// full/empty mbarriers, no cluster), but persistent: grid = number of SMs (132 on the H100), CTA c processes
// the tiles c, c + G, c + 2G, ... (G = gridDim.x) of a tile sequence over the (M/128) x (N/BN) tile grid.
// The ring runs on across tiles: the producer's k-tile counter does not restart, so it loads the next tile's
// first stages while the consumers store the previous tile (the epilogue: direct 4-byte bf16-pair stores).
// ORDER (tile sequence, index t -> (tile row tm, tile column tn)):
//   0 row:     tm = t / NT, tn = t % NT (N fastest);
//   1 grouped: groups of 8 tile rows; inside a group column by column (M fastest): g = t / (8 NT),
//              rows in group gm = min(8, MT - 8g), u = t - 8 g NT, tm = 8g + u % gm, tn = u / gm;
//   2 hilbert: the Hilbert curve over the smallest power-of-two square covering the MT x NT grid, tiles
//              outside the grid skipped; the sequence is computed on the host (validate/run_tc_sm90.py:
//              hilbert_order, curve point (x, y) -> tm = x, tn = y) and passed as `order` (t -> tm << 16 | tn).
//              `order` is unused for ORDER 0 and 1.
// Knobs: -DSTAGES (default 3), -DBN (128/256, default 256), -DSWIZZLE (32/64/128, default 128),
// -DORDER (0 row, 1 grouped (default), 2 hilbert).
// Shared memory: STAGES * (128 + BN) * 128 B (+ 1 KiB alignment slack + barriers).
// Tensor maps: A dims {K, M} box {SWIZZLE/2, 128}; B dims {K, N} box {SWIZZLE/2, BN}.
// Needs M % 128, N % BN, K % 64 == 0.
#include "hopper_common.cuh"

#ifndef STAGES
#define STAGES 3
#endif
#ifndef BN
#define BN 256
#endif
#ifndef ORDER
#define ORDER 1
#endif
#if BN != 128 && BN != 256
#error "BN must be 128 or 256"
#endif
#if ORDER < 0 || ORDER > 2
#error "ORDER must be 0 (row), 1 (grouped) or 2 (hilbert)"
#endif
#define WS_BM 128
#define WS_TILE_A (WS_BM * 128)
#define WS_STAGE_BYTES ((WS_BM + BN) * 128)
#if STAGES < 1 || STAGES * WS_STAGE_BYTES + 1024 + 128 > 227 * 1024
#error "STAGES * (128 + BN) * 128 B of shared memory exceeds 227 KiB"
#endif
#define NACC (BN / 2)
#define GROUP_M 8

static __device__ __forceinline__ void wgmma_tile(float (&acc)[NACC], unsigned long long da,
                                                  unsigned long long db) {
#if BN == 256
  wgmma_m64n256k16(acc, da, db);
#else
  wgmma_m64n128k16(acc, da, db);
#endif
}

static __device__ __forceinline__ void tile_of(int t, int MT, int NT, const int* __restrict__ order, int& tm,
                                               int& tn) {
#if ORDER == 0
  tm = t / NT;
  tn = t % NT;
  (void)MT;
  (void)order;
#elif ORDER == 1
  const int g = t / (GROUP_M * NT);
  const int gm = min(GROUP_M, MT - g * GROUP_M);
  const int u = t - g * GROUP_M * NT;
  tm = g * GROUP_M + u % gm;
  tn = u / gm;
  (void)order;
#else
  const int v = __ldg(order + t);
  tm = v >> 16;
  tn = v & 0xFFFF;
  (void)MT;
  (void)NT;
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
    hgemm_persistent(TMAP_ARG(tmA), TMAP_ARG(tmB), bf16_t* __restrict__ C, int M, int N, int K,
                     const int* __restrict__ order) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned int full = base + STAGES * WS_STAGE_BYTES;  // full[s] = full + 8 s
  const unsigned int empty = full + 8 * STAGES;              // empty[s] = empty + 8 s
  const int MT = M / WS_BM, NT = N / BN, T = MT * NT;
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
      int it = 0;  // k-tiles issued by this CTA so far (ring position)
      for (int tile = blockIdx.x; tile < T; tile += gridDim.x) {
        int tm, tn;
        tile_of(tile, MT, NT, order, tm, tn);
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbar_wait(empty + 8 * s, (unsigned int)(it / STAGES - 1) & 1u);
          const unsigned int a = base + s * WS_STAGE_BYTES, b = a + WS_TILE_A, bar = full + 8 * s;
          mbar_arrive_expect_tx(bar, WS_STAGE_BYTES);
          tma_load_panel(a, WS_BM, 0, mapA, kt * 64, tm * WS_BM, WS_BM, bar);
          tma_load_panel(b, BN, 0, mapB, kt * 64, tn * BN, BN, bar);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int r0 = (wg - 1) * 64;
    int it = 0;
    for (int tile = blockIdx.x; tile < T; tile += gridDim.x) {
      int tm, tn;
      tile_of(tile, MT, NT, order, tm, tn);
      float acc[NACC];
#pragma unroll
      for (int i = 0; i < NACC; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        const unsigned int a = base + s * WS_STAGE_BYTES, b = a + WS_TILE_A;
        mbar_wait(full + 8 * s, (unsigned int)(it / STAGES) & 1u);
        wg_fence();
#pragma unroll
        for (int ks = 0; ks < 4; ++ks)
          wgmma_tile(acc, wg_desc(kslice_addr(a, WS_BM, r0, ks)), wg_desc(kslice_addr(b, BN, 0, ks)));
        wg_commit();
        wg_wait0();
        if (t == 0) mbar_arrive(empty + 8 * s);
      }
      store_acc_bf16<NACC>(acc, C, N, (long long)tm * WS_BM + r0, (long long)tn * BN, t);
    }
  }
}
