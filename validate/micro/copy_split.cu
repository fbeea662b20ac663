// hgemm_mma_pipelined's copies and its compute in *different* warps of one CTA (validate/micro/run_copy_split.py): does
// the compute slow down when other warps of its sub-partitions copy, or only the copies? One CTA of 16 warps per SM.
// Warps 0-3 and 8-11 copy, warps 4-7 and 12-15 compute, so each sub-partition (warp % 4) has two of each. A copier
// does what ldsm_mma.cu's copies do per iteration (wait for all but its last batch, then 8 cp.async.cg of 16 B per
// lane from its CTA's `window` of `src` into a 64 KiB ring of dynamic shared memory); a computer does 4 k16 steps of
// 16 mma.sync m16n8k16 bf16 on fragments loaded once (`ffma`: 64 FFMA per step instead, 16 independent chains).
// `active` bit 0: the copiers run `iters` iterations, bit 1: the computers do (the others run none). Lane 0 of
// every warp records clock64 at start and end in rec[(block * 32 + warp) * 2 + {0, 1}].

#include "mma_sync.cuh"

template <int active, bool ffma>
__device__ __forceinline__ void split(int iters, const char* src, long long window, float* sink, long long* rec) {
  __shared__ __align__(128) unsigned char smem[6 * 512];
  extern __shared__ __align__(128) unsigned char ring[];
  for (int i = threadIdx.x; i < 6 * 512 / 4; i += blockDim.x) reinterpret_cast<unsigned*>(smem)[i] = 0x3c003c00u ^ i;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool copier = ((warp >> 2) & 1) == 0;
  const int n = copier ? ((active & 1) ? iters : 0) : ((active & 2) ? iters : 0);
  float acc[16][4];
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
  unsigned a[4][4], b[2][4];
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem) + lane * 16;
#pragma unroll
  for (int i = 0; i < 4; ++i) ldsm4(base + i * 512, a[i]);
#pragma unroll
  for (int j = 0; j < 2; ++j) ldsm4(base + (4 + j) * 512, b[j]);
  const unsigned rbase = (unsigned)__cvta_generic_to_shared(ring);
  const char* win = src + (long long)blockIdx.x * window;
  long long t0 = clock64();
  if (copier) {
#pragma unroll 1
    for (int it = 0; it < n; ++it) copy_batch<8, 16>(it, warp, lane, rbase, win, window);
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else {
#pragma unroll 1
    for (int it = 0; it < n; ++it) {
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        if constexpr (ffma) {
#pragma unroll
          for (int k = 0; k < 64; ++k) acc[k % 16][(k / 16) % 4] = fmaf(acc[k % 16][(k / 16) % 4], 1.0001f, 0.5f);
        } else {
#pragma unroll
          for (int k = 0; k < 16; ++k) mma(acc[k], a[k / 4], b[(k % 4) / 2][2 * (k % 2)], b[(k % 4) / 2][2 * (k % 2) + 1]);
        }
      }
    }
  }
  long long t1 = clock64();
  finish(acc, t0, t1, sink, rec, warp, lane);
}

#define SPLIT(ACTIVE, FFMA, NAME)                                                                               \
  extern "C" __global__ void copy_split_##NAME(int iters, const char* src, long long window, float* sink,      \
                                               long long* rec) {                                              \
    split<ACTIVE, FFMA>(iters, src, window, sink, rec);                                                       \
  }
SPLIT(1, false, copies)
SPLIT(2, false, mma)
SPLIT(3, false, copies_mma)
SPLIT(2, true, ffma)
SPLIT(3, true, copies_ffma)
