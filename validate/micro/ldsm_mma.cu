// How ldmatrix and mma.sync share one SM sub-partition when a warp interleaves them as hgemm_mma_pipelined's inner
// loop does (validate/micro/run_ldsm_mma.py). One CTA of `warps` warps per SM, no global memory traffic but in modes
// 4-7. Per k16 step a warp loads its fragments with 4 ldmatrix.x4 of A and 2 of B (conflict-free: each 8x8 matrix is 128 contiguous
// bytes) and runs `mmas` mma.sync m16n8k16 bf16 (16: a 64x32 warp tile, fp32 accumulators; 8: every A fragment
// with half the B ones; 32: the 16 twice on the same accumulators), 4 steps per iteration, unrolled so that ptxas
// schedules them as in the twin. Kernels ldsm_mma_<mode>_<mmas>: mode 3 (both; each step's mma use that step's
// fragments) and mode 1 (the mma alone, on fragments loaded once; ldmatrix alone: run_ldsm_cpasync.py's readers,
// 0.98 wavefronts per cycle). Lane 0 of every warp records clock64 at start and end in
// rec[(block * 32 + warp) * 2 + {0, 1}]. Modes 4, 5 and 7 add hgemm_mma_pipelined's copies (see body): alone, beside
// the mma alone, beside both; mode 8 runs FFMA instead of the mma (4 per mma), 12 the copies beside them.

#include "mma_sync.cuh"

// mode bit 0: mma.sync, bit 3: FFMA instead, bit 1: ldmatrix (only with mma: ptxas drops loads nothing uses), bit 2: copies (per
// iteration each warp waits for all but its last batch of copies, then issues `copies` (8) cp.async.cg of `width` (16)
// B per lane (4 B: cp.async.ca), 4 KiB at the defaults,
// from its CTA's `window` bytes of `src`, into a 64 KiB ring of dynamic shared memory: hgemm_mma_pipelined's copies
// without its barrier); `mmas` mma.sync per k16 step (16: the 64x32 warp tile; 8: every A fragment with half the B
// ones; 32: the 16 twice, the second on the same accumulators)
template <int mode, int mmas, int copies = 8, int width = 16>
__device__ __forceinline__ void body(int iters, const char* src, long long window, float* sink, long long* rec) {
  __shared__ __align__(128) unsigned char smem[64 * 512];
  extern __shared__ __align__(128) unsigned char ring[];
  for (int i = threadIdx.x; i < 64 * 512 / 4; i += blockDim.x) reinterpret_cast<unsigned*>(smem)[i] = 0x3c003c00u ^ i;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem) + lane * 16;
  float acc[16][4];
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
  unsigned a[4][4], b[2][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) ldsm4(base + i * 512, a[i]);
#pragma unroll
  for (int j = 0; j < 2; ++j) ldsm4(base + (4 + j) * 512, b[j]);
  const unsigned rbase = (unsigned)__cvta_generic_to_shared(ring);
  const char* win = src + (long long)blockIdx.x * window;
  long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    if constexpr ((mode & 4) != 0) copy_batch<copies, width>(it, warp, lane, rbase, win, window);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      if constexpr (mode & 2) {
        const int step = (it * 4 + s) * 6;  // 6 matrices of 512 B a step, round a 32 KiB region
#pragma unroll
        for (int i = 0; i < 4; ++i) ldsm4(base + (unsigned)(((step + i) & 63) * 512), a[i]);
#pragma unroll
        for (int j = 0; j < 2; ++j) ldsm4(base + (unsigned)(((step + 4 + j) & 63) * 512), b[j]);
      }
      if constexpr ((mode & 8) != 0) {  // FFMA instead: 4 x mmas a step, 16 independent chains
#pragma unroll
        for (int k = 0; k < 4 * mmas; ++k) acc[k % 16][(k / 16) % 4] = fmaf(acc[k % 16][(k / 16) % 4], 1.0001f, 0.5f);
      }
      if constexpr ((mode & 1) != 0) {
#pragma unroll
        for (int k = 0; k < mmas; ++k) {
          const int i = mmas == 8 ? k / 2 : (k % 16) / 4, j = mmas == 8 ? (k % 2) * 2 : k % 4;  // every fragment used
          mma(acc[k % 16], a[i], b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
        }
      }
    }
  }
  if constexpr ((mode & 4) != 0) asm volatile("cp.async.wait_all;" ::: "memory");
  long long t1 = clock64();
  finish(acc, t0, t1, sink, rec, warp, lane);
}

#define LDSM_MMA(MODE, MMAS)                                                                                  \
  extern "C" __global__ void ldsm_mma_##MODE##_##MMAS(int iters, const char* src, long long window, float* sink, \
                                                      long long* rec) {                                          \
    body<MODE, MMAS>(iters, src, window, sink, rec);                                                          \
  }
LDSM_MMA(1, 8)
LDSM_MMA(3, 8)
LDSM_MMA(1, 16)
LDSM_MMA(3, 16)
LDSM_MMA(1, 32)
LDSM_MMA(3, 32)
LDSM_MMA(4, 16)
LDSM_MMA(5, 16)
LDSM_MMA(7, 16)
LDSM_MMA(8, 16)
LDSM_MMA(12, 16)
// the copies beside the mma alone, fewer (2 a batch) or narrower (8 of 4 B, cp.async.ca: a quarter of the bytes)
extern "C" __global__ void ldsm_mma_5_16_c2(int iters, const char* src, long long window, float* sink, long long* rec) {
  body<5, 16, 2, 16>(iters, src, window, sink, rec);
}
extern "C" __global__ void ldsm_mma_5_16_w4(int iters, const char* src, long long window, float* sink, long long* rec) {
  body<5, 16, 8, 4>(iters, src, window, sink, rec);
}
