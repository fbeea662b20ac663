// Shared body of the mma.sync GEMM twins (hgemm_mma, hgemm_mma_swizzled, hgemm_mma_pipelined); see the
// "mma.sync family" section of validate/kernels/TC_DESIGNS.md, which this follows step by step.
//
//   C (M x N, bf16) = A (M x K, bf16, row-major) * B^T, B is N x K (K-major, "TN"); fp32 accumulation.
//   BM = BN = 128, BK = 64, 256 threads = 8 warps; warp w: wm = w / 4 (0..1), wn = w % 4 (0..3) owns the
//   64 (M) x 32 (N) warp tile = 4 (m16) x 4 (n8) mma tiles. grid = (N / 128, M / 128), blockIdx.x walks N.
//   Per stage: A tile 128 x 64 (16 KiB) then B tile 128 (n) x 64 (k) (16 KiB), each one 128-byte-row panel,
//   byte (r, c) of a tile at swz(r*128 + 2*c), swz(off) = off ^ (((off >> 7) & MASK) << 4).
//   Dynamic shared memory = STAGES * 32 KiB (1024-byte aligned base).
//   STAGES == 1: LDG.128 -> registers -> STS.128, __syncthreads, compute, __syncthreads.
//   STAGES >= 2: cp.async.cg 16 B, one commit group per tile; prologue tiles 0..STAGES-2; iteration kt:
//     wait_group(STAGES-2), __syncthreads, issue tile kt+STAGES-1 into slot (kt+STAGES-1) % STAGES, commit
//     (also when empty), compute slot kt % STAGES.
//   Compute per tile: 4 k16 steps x (4 ldmatrix.x4 for A, 2 ldmatrix.x4 for B, 16 mma.sync.m16n8k16).
//   Epilogue: fp32 -> bf16x2 (cvt.rn.bf16x2.f32), 4-byte stores straight to C.
// Requires M % 128 == 0, N % 128 == 0, K % 64 == 0, 16-byte aligned rows (K % 8 == 0).
// No headers: bf16 values are passed as raw 16-bit patterns (unsigned short), so NVRTC (CuPy RawModule) and
// nvcc both build it. Knobs: -DSTAGES (1..8), -DSWIZZLE (0 = none, 32, 64, 128), defaults set by each twin.
#pragma once

#if SWIZZLE == 0
#define HG_SWZ_MASK 0
#elif SWIZZLE == 32
#define HG_SWZ_MASK 1
#elif SWIZZLE == 64
#define HG_SWZ_MASK 3
#elif SWIZZLE == 128
#define HG_SWZ_MASK 7
#else
#error "SWIZZLE must be 0, 32, 64 or 128"
#endif
#if STAGES < 1 || STAGES > 8
#error "STAGES must be 1..8"
#endif

#define HG_BM 128
#define HG_BN 128
#define HG_BK 64
#define HG_THREADS 256
#define HG_TILE_BYTES (128 * 128)             // one operand tile: 128 rows x 64 bf16 = 16 KiB
#define HG_STAGE_BYTES (2 * HG_TILE_BYTES)    // A tile then B tile

typedef unsigned short hg_bf16;  // raw bf16 bits

static __device__ __forceinline__ unsigned hg_swz(unsigned off) {
  return off ^ (((off >> 7) & HG_SWZ_MASK) << 4);
}
static __device__ __forceinline__ unsigned hg_smem_u32(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
static __device__ __forceinline__ void hg_cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void hg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void hg_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
static __device__ __forceinline__ void hg_ldsm_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                                  unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
static __device__ __forceinline__ void hg_mma(float* d, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// lo -> bits 0..15, hi -> bits 16..31 (the lower column in the lower half, as bf16 pairs lie in memory)
static __device__ __forceinline__ unsigned hg_pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// One 128 x 64 tile of A (rows bm*128..) or B (rows bn*128..) into a stage, 4 16-B chunks per thread.
static __device__ __forceinline__ void hg_issue_tile_async(unsigned dst_tile, const hg_bf16* src_rows, int K,
                                                           int kt, int tid) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int idx = tid + HG_THREADS * i;
    const int row = idx >> 3, chunk = idx & 7;
    hg_cp_async16(dst_tile + hg_swz(row * 128 + chunk * 16), src_rows + (long long)row * K + kt * HG_BK + chunk * 8);
  }
}

static __device__ __forceinline__ void hg_compute_tile(unsigned sA, unsigned sB, int wm, int wn, int lane,
                                                       float (&acc)[4][4][4]) {
#pragma unroll
  for (int ks = 0; ks < HG_BK / 16; ++ks) {
    unsigned a[4][4], b[4][2];
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
      const int row = wm * 64 + mi * 16 + (lane & 15);
      const int chunk = 2 * ks + (lane >> 4);
      hg_ldsm_x4(sA + hg_swz(row * 128 + chunk * 16), a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
    }
#pragma unroll
    for (int np = 0; np < 2; ++np) {
      const int row = wn * 32 + np * 16 + (lane & 7) + 8 * (lane >> 4);
      const int chunk = 2 * ks + ((lane >> 3) & 1);
      hg_ldsm_x4(sB + hg_swz(row * 128 + chunk * 16), b[2 * np][0], b[2 * np][1], b[2 * np + 1][0],
                 b[2 * np + 1][1]);
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) hg_mma(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
    }
  }
}

static __device__ __forceinline__ void hgemm_mma_body(int M, int N, int K, const hg_bf16* __restrict__ A,
                                                      const hg_bf16* __restrict__ B, hg_bf16* __restrict__ C) {
  extern __shared__ __align__(1024) unsigned char hg_smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp >> 2, wn = warp & 3;
  const int bn = blockIdx.x, bm = blockIdx.y;
  const hg_bf16* Ab = A + (long long)bm * HG_BM * K;
  const hg_bf16* Bb = B + (long long)bn * HG_BN * K;
  const unsigned s0 = hg_smem_u32(hg_smem);
  const int KT = K / HG_BK;

  float acc[4][4][4];
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

#if STAGES == 1
  for (int kt = 0; kt < KT; ++kt) {
    uint4 ra[4], rb[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // LDG.128
      const int idx = tid + HG_THREADS * i;
      const int row = idx >> 3, chunk = idx & 7;
      ra[i] = *reinterpret_cast<const uint4*>(Ab + (long long)row * K + kt * HG_BK + chunk * 8);
      rb[i] = *reinterpret_cast<const uint4*>(Bb + (long long)row * K + kt * HG_BK + chunk * 8);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // STS.128
      const int idx = tid + HG_THREADS * i;
      const int row = idx >> 3, chunk = idx & 7;
      const unsigned off = hg_swz(row * 128 + chunk * 16);
      *reinterpret_cast<uint4*>(hg_smem + off) = ra[i];
      *reinterpret_cast<uint4*>(hg_smem + HG_TILE_BYTES + off) = rb[i];
    }
    __syncthreads();
    hg_compute_tile(s0, s0 + HG_TILE_BYTES, wm, wn, lane, acc);
    __syncthreads();
  }
#else
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0..STAGES-2, one group each (empty past the end)
    if (s < KT) {
      hg_issue_tile_async(s0 + s * HG_STAGE_BYTES, Ab, K, s, tid);
      hg_issue_tile_async(s0 + s * HG_STAGE_BYTES + HG_TILE_BYTES, Bb, K, s, tid);
    }
    hg_cp_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    hg_cp_wait<STAGES - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();           // ... everyone's, and slot (kt-1) % STAGES is no longer read
    const int nt = kt + STAGES - 1;
    if (nt < KT) {
      const unsigned st = s0 + (nt % STAGES) * HG_STAGE_BYTES;
      hg_issue_tile_async(st, Ab, K, nt, tid);
      hg_issue_tile_async(st + HG_TILE_BYTES, Bb, K, nt, tid);
    }
    hg_cp_commit();
    const unsigned sc = s0 + (kt % STAGES) * HG_STAGE_BYTES;
    hg_compute_tile(sc, sc + HG_TILE_BYTES, wm, wn, lane, acc);
  }
  hg_cp_wait<0>();
#endif

#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
    const int r0 = bm * HG_BM + wm * 64 + mi * 16 + (lane >> 2);
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int c = bn * HG_BN + wn * 32 + ni * 8 + 2 * (lane & 3);
      *reinterpret_cast<unsigned*>(C + (long long)r0 * N + c) = hg_pack_bf16x2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<unsigned*>(C + (long long)(r0 + 8) * N + c) = hg_pack_bf16x2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}
