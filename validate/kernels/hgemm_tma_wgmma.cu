// gpusim-twin: kernels_ir/hgemm.py::hgemm_tma_wgmma
// C (M x N, bf16) = A (M x K, bf16, row-major) * B^T, B N x K row-major ("TN"); fp32 accumulation.
// TC_DESIGNS.md "Hopper GEMMs": BM = BN = 128, BK = 64, 128 threads (one warpgroup), grid = (N/128, M/128)
// (blockIdx.x walks N). Thread 0 issues the TMA loads of the A tile (128 x 64) and the B tile (128 n x 64 k)
// with mbarrier.arrive.expect_tx(32768) on the stage's full barrier; everyone waits on that barrier's phase;
// per tile 4 k16 steps x 2 wgmma.mma_async.m64n128k16 (rows 0-63 and 64-127 of the tile), A and B from
// shared-memory descriptors; commit_group; wait_group 0; __syncthreads before the buffer is refilled.
// STAGES > 1: a ring of STAGES buffers with one full barrier each; at iteration kt thread 0 first issues tile
// kt + STAGES - 1 (into the buffer freed by the __syncthreads that ended iteration kt - 1), so STAGES - 1
// tiles are in flight while tile kt is computed. Epilogue: direct 4-byte bf16-pair stores of the accumulators.
// Knobs: -DSTAGES (default 1), -DSWIZZLE (32/64/128, default 128; see hopper_common.cuh for the layout).
// Shared memory (dynamic): STAGES * 32 KiB + 1 KiB alignment slack + barriers.
// Tensor maps (validate/tma.py): A: dims {K, M}, box {SWIZZLE/2, 128}; B: dims {K, N}, box {SWIZZLE/2, 128}.
// Needs M, N % 128 == 0, K % 64 == 0.
#include "hopper_common.cuh"

#ifndef STAGES
#define STAGES 1
#endif
#if STAGES < 1 || STAGES > 6
#error "STAGES must be 1..6 (6 * 32 KiB fits in 227 KiB)"
#endif

#define TW_BM 128
#define TW_BN 128
#define TW_TILE_A (TW_BM * 128)                // bytes of the A tile (128 rows x 64 bf16)
#define TW_STAGE_BYTES ((TW_BM + TW_BN) * 128)  // 32 KiB

extern "C" __global__ void __launch_bounds__(128, 1)
    hgemm_tma_wgmma(TMAP_ARG(tmA), TMAP_ARG(tmB), bf16_t* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned int bars = base + STAGES * TW_STAGE_BYTES;  // full[s] at bars + 8 s
  const int tid = threadIdx.x;
  const int n0 = blockIdx.x * TW_BN, m0 = blockIdx.y * TW_BM;
  const int KT = K / 64;
  const unsigned long long mapA = TMAP_ADDR(tmA), mapB = TMAP_ADDR(tmB);

  if (tid == 0) {
    tma_prefetch_map(mapA);
    tma_prefetch_map(mapB);
    for (int s = 0; s < STAGES; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
  }
  __syncthreads();

  float acc0[64], acc1[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc0[i] = acc1[i] = 0.0f;

  auto issue = [&](int kt) {  // thread 0: tile kt -> slot kt % STAGES
    const int s = kt % STAGES;
    const unsigned int a = base + s * TW_STAGE_BYTES, b = a + TW_TILE_A, bar = bars + 8 * s;
    mbar_arrive_expect_tx(bar, TW_STAGE_BYTES);
    tma_load_panel(a, TW_BM, 0, mapA, kt * 64, m0, TW_BM, bar);
    tma_load_panel(b, TW_BN, 0, mapB, kt * 64, n0, TW_BN, bar);
  };
  if (tid == 0)
    for (int t = 0; t < STAGES - 1 && t < KT; ++t) issue(t);

  for (int kt = 0; kt < KT; ++kt) {
    if (tid == 0 && kt + STAGES - 1 < KT) issue(kt + STAGES - 1);
    const int s = kt % STAGES;
    const unsigned int a = base + s * TW_STAGE_BYTES, b = a + TW_TILE_A;
    mbar_wait(bars + 8 * s, (unsigned int)(kt / STAGES) & 1u);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const unsigned long long db = wg_desc(kslice_addr(b, TW_BN, 0, ks));
      wgmma_m64n128k16(acc0, wg_desc(kslice_addr(a, TW_BM, 0, ks)), db);
      wgmma_m64n128k16(acc1, wg_desc(kslice_addr(a, TW_BM, 64, ks)), db);
    }
    wg_commit();
    wg_wait0();
    __syncthreads();
  }
  store_acc_bf16<64>(acc0, C, N, m0, n0, tid);
  store_acc_bf16<64>(acc1, C, N, m0 + 64, n0, tid);
}
