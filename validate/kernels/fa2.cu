// gpusim-twin: kernels_ir/attention.py::fa2
// FlashAttention-2 forward with mma.sync (TC_DESIGNS.md, "FlashAttention forward" / fa2).
//   Q, K, V, O: bf16 [B, H, N, d] contiguous (raw 16-bit patterns here, no headers), fp32 softmax/accumulation.
//   grid = (N / BR, H, B), block = 128 threads (4 warps); warp w owns Q rows w*BR/4 .. (w+1)*BR/4 - 1
//   (BR/64 m16 tiles: two for BR = 128).
//   Shared memory (dynamic, 1024-aligned): Q tile BR x d, then one K tile BC x d, then one V tile BC x d; each
//   tile is d/64 panels of (rows x 64 bf16), panel after panel, byte (r, c) of a panel at r*128 + 2*c and the
//   swizzle swz(off) = off ^ (((off >> 7) & MASK) << 4) on the byte offset within the tile.
//   Loads: 16-B cp.async.cg; chunk c of a tile (c = row * d/8 + 16-B column, i.e. row-major over the global
//   tile so a warp reads whole rows) is moved by thread c % 128 (thread t: chunks t, t+128, ...).
//   Prologue: Q and K_0, commit. Iteration j: wait_group 0, __syncthreads, issue V_j, commit;
//     S = Q K_j^T (Q and K fragments by ldmatrix.x4 each iteration, mma.sync m16n8k16);
//     causal: mask key > query in the blocks that cross the diagonal;
//     online softmax in registers: row max (shfl.xor 1, 2 within the quad), p = exp2f(s*c - m*c) with
//     c = log2(e)/sqrt(d), per-thread partial row sums (the quad's partial sums are added with shfl.xor once,
//     in the epilogue), O rescaled by exp2f((m_old - m_new)*c);
//     wait_group 0, __syncthreads, issue K_{j+1} (if any), commit;
//     O += P V_j with P converted to bf16 A fragments in registers and V fragments by ldmatrix.x4.trans.
//   Epilogue: O /= l, bf16 pairs (cvt.rn.bf16x2.f32), direct 4-byte stores.
//   Causal: Q block i visits KV blocks 0 .. ((i+1)*BR - 1) / BC.
// Knobs: -DHEAD_DIM (64 | 128, default 128), -DBR (default 128), -DBC (default 128 for d = 64, 64 for d = 128),
//   -DCAUSAL (0 | 1, default 0), -DSWIZZLE (0 | 32 | 64 | 128, default 128).
// Requires N % BR == 0 and N % BC == 0.
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef BR
#define BR 128
#endif
#ifndef BC
#if HEAD_DIM == 64
#define BC 128
#else
#define BC 64
#endif
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef SWIZZLE
#define SWIZZLE 128
#endif

#if SWIZZLE == 0
#define FA_SWZ_MASK 0
#elif SWIZZLE == 32
#define FA_SWZ_MASK 1
#elif SWIZZLE == 64
#define FA_SWZ_MASK 3
#elif SWIZZLE == 128
#define FA_SWZ_MASK 7
#else
#error "SWIZZLE must be 0, 32, 64 or 128"
#endif
#if HEAD_DIM % 64 != 0
#error "HEAD_DIM must be a multiple of 64 (64 or 128)"
#endif
#if BR % 64 != 0 || BC % 16 != 0
#error "BR must be a multiple of 64 (16 rows per warp at least) and BC a multiple of 16"
#endif

#define FA_THREADS 128
#define FA_WARP_ROWS (BR / 4)
#define FA_MT (FA_WARP_ROWS / 16)        // m16 tiles per warp
#define FA_NT_S (BC / 8)                 // n8 tiles of S per warp row block
#define FA_NT_O (HEAD_DIM / 8)           // n8 tiles of O
#define FA_CH (HEAD_DIM / 8)             // 16-B chunks per row
#define FA_Q_BYTES (BR * HEAD_DIM * 2)
#define FA_KV_BYTES (BC * HEAD_DIM * 2)

typedef unsigned short fa_bf16;
#define FA_NEG_INF __int_as_float(0xff800000)

static __device__ __forceinline__ unsigned fa_smem_u32(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
// byte offset of (row, 16-B column chunk cc) in a tile of R rows, panels of 64 columns, swizzled
template <int R>
static __device__ __forceinline__ unsigned fa_off(int row, int cc) {
  const unsigned off = (unsigned)((cc >> 3) * R * 128 + row * 128 + (cc & 7) * 16);
  return off ^ (((off >> 7) & FA_SWZ_MASK) << 4);
}
static __device__ __forceinline__ void fa_cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void fa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
static __device__ __forceinline__ void fa_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
static __device__ __forceinline__ void fa_ldsm_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                                  unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
static __device__ __forceinline__ void fa_ldsm_x4_t(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                                    unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
static __device__ __forceinline__ void fa_mma(float* d, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ unsigned fa_pack(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// ldmatrix addressing: a lane's 16-B chunk is cc = 2*k + lc (k = k16 step, lc = 0 or 1 from the lane), and its
// row has row % 8 fixed by the lane, so swz(chunk) = (2*(k % 4)) ^ (lc ^ (row & MASK)): one per-lane offset
// `pre` = row*128 + 16*(lc ^ (row & MASK)) serves every k16 step through one XOR; the panel (k / 4) and
// 16-row steps are added as constants.
template <int R>
static __device__ __forceinline__ unsigned fa_addr(unsigned tile, unsigned pre, int k, int row_add) {
  return tile + (unsigned)((k >> 2) * R * 128 + row_add * 128) + (pre ^ (unsigned)((2 * (k & 3)) << 4));
}

// R rows x HEAD_DIM of a [.., N, d] tensor into a swizzled tile. Thread t moves chunks t, t+128, ...: chunk c is
// row c / (d/8), 16-B column c % (d/8); 128 is a multiple of d/8, so a thread's column and row % 8 (hence its
// swizzle) are the same for all its chunks: dst = tile + doff + i*(128/(d/8))*128, src = src0 + i*(128/(d/8))*d.
template <int R>
static __device__ __forceinline__ void fa_load_tile(unsigned tile, unsigned doff, const fa_bf16* src0) {
#pragma unroll
  for (int i = 0; i < R * FA_CH / FA_THREADS; ++i)
    fa_cp_async16(tile + doff + i * (FA_THREADS / FA_CH) * 128, src0 + i * (FA_THREADS / FA_CH) * HEAD_DIM);
}

extern "C" __global__ void __launch_bounds__(FA_THREADS)
fa2(int B, int H, int N, const unsigned short* __restrict__ Q, const unsigned short* __restrict__ K,
    const unsigned short* __restrict__ V, unsigned short* __restrict__ O) {
  extern __shared__ __align__(1024) unsigned char fa_smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int qb = blockIdx.x;
  const long long bh = (long long)blockIdx.z * H + blockIdx.y;
  const fa_bf16* Qb = Q + (bh * N + (long long)qb * BR) * HEAD_DIM;
  const fa_bf16* Kb = K + bh * N * HEAD_DIM;
  const fa_bf16* Vb = V + bh * N * HEAD_DIM;
  const unsigned sQ = fa_smem_u32(fa_smem);
  const unsigned sK = sQ + FA_Q_BYTES;
  const unsigned sV = sK + FA_KV_BYTES;
  const float sl2 = 1.4426950408889634f * rsqrtf((float)HEAD_DIM);  // log2(e) / sqrt(d)
  const int nkv = N / BC;
#if CAUSAL
  const int nblk = min(nkv, ((qb + 1) * BR - 1) / BC + 1);
#else
  const int nblk = nkv;
#endif
  const int row0 = warp * FA_WARP_ROWS;  // first Q row of this warp within the block
  // per-lane ldmatrix offsets (see fa_addr): Q rows row0 + lane%16, chunk bit lane/16; K rows lane%8 +
  // 8*(lane/16), chunk bit (lane/8)%2; V (trans) rows lane%8 + 8*((lane/8)%2), chunk bit lane/16
  const unsigned rsw = (unsigned)(lane & 7 & FA_SWZ_MASK);
  const unsigned preQ = (unsigned)(row0 + (lane & 15)) * 128 + ((((unsigned)lane >> 4) ^ rsw) << 4);
  const unsigned preK = (unsigned)((lane & 7) + 8 * (lane >> 4)) * 128 + (((((unsigned)lane >> 3) & 1) ^ rsw) << 4);
  const unsigned preV = (unsigned)((lane & 7) + 8 * ((lane >> 3) & 1)) * 128 + ((((unsigned)lane >> 4) ^ rsw) << 4);

  float o[FA_MT][FA_NT_O][4];
  float m[FA_MT][2], l[FA_MT][2];
#pragma unroll
  for (int mi = 0; mi < FA_MT; ++mi) {
#pragma unroll
    for (int nd = 0; nd < FA_NT_O; ++nd)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mi][nd][e] = 0.0f;
    m[mi][0] = m[mi][1] = FA_NEG_INF;
    l[mi][0] = l[mi][1] = 0.0f;
  }

  const int trow = tid / FA_CH, tcol = tid % FA_CH;  // this thread's first chunk of every tile load
  const unsigned doffQ = fa_off<BR>(trow, tcol), doffKV = fa_off<BC>(trow, tcol);
  const int soff = trow * HEAD_DIM + tcol * 8;
  const fa_bf16* kp = Kb + soff;  // running pointers: K_{j} / V_{j} chunk of this thread
  const fa_bf16* vp = Vb + soff;

  fa_load_tile<BR>(sQ, doffQ, Qb + soff);
  fa_load_tile<BC>(sK, doffKV, kp);
  fa_commit();

  for (int j = 0; j < nblk; ++j) {
    fa_wait_all();
    __syncthreads();  // K_j (and Q) visible; every warp is done with V_{j-1}
    fa_load_tile<BC>(sV, doffKV, vp);
    vp += BC * HEAD_DIM;
    fa_commit();

    // ---- S = Q K_j^T
    float s[FA_MT][FA_NT_S][4];
#pragma unroll
    for (int mi = 0; mi < FA_MT; ++mi)
#pragma unroll
      for (int ni = 0; ni < FA_NT_S; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mi][ni][e] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < HEAD_DIM / 16; ++ks) {
      unsigned a[FA_MT][4];
#pragma unroll
      for (int mi = 0; mi < FA_MT; ++mi)
        fa_ldsm_x4(fa_addr<BR>(sQ, preQ, ks, mi * 16), a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
#pragma unroll
      for (int np = 0; np < BC / 16; ++np) {
        unsigned b0, b1, b2, b3;
        fa_ldsm_x4(fa_addr<BC>(sK, preK, ks, np * 16), b0, b1, b2, b3);
#pragma unroll
        for (int mi = 0; mi < FA_MT; ++mi) {
          fa_mma(s[mi][2 * np], a[mi], b0, b1);
          fa_mma(s[mi][2 * np + 1], a[mi], b2, b3);
        }
      }
    }

#if CAUSAL
    // ---- mask the blocks that cross the diagonal (some key index > the block's first query index)
    if ((j + 1) * BC - 1 > qb * BR) {
#pragma unroll
      for (int mi = 0; mi < FA_MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < FA_NT_S; ++ni)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int q = qb * BR + row0 + mi * 16 + (lane >> 2) + 8 * (e >> 1);
            const int k = j * BC + ni * 8 + 2 * (lane & 3) + (e & 1);
            if (k > q) s[mi][ni][e] = FA_NEG_INF;
          }
    }
#endif

    // ---- online softmax (rows lane/4 and lane/4 + 8 of each m16 tile; a quad shares a row)
#pragma unroll
    for (int mi = 0; mi < FA_MT; ++mi) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = FA_NEG_INF;
#pragma unroll
        for (int ni = 0; ni < FA_NT_S; ++ni) mx = fmaxf(mx, fmaxf(s[mi][ni][2 * h], s[mi][ni][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m[mi][h], mx);
        const float ms = (m_new == FA_NEG_INF) ? 0.0f : m_new * sl2;  // a fully masked row so far
        const float alpha = exp2f(m[mi][h] * sl2 - ms);
        m[mi][h] = m_new;
        float rs = 0.0f;
#pragma unroll
        for (int ni = 0; ni < FA_NT_S; ++ni) {
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) {
            const float p = exp2f(fmaf(s[mi][ni][e], sl2, -ms));
            s[mi][ni][e] = p;
            rs += p;
          }
        }
        l[mi][h] = l[mi][h] * alpha + rs;
#pragma unroll
        for (int nd = 0; nd < FA_NT_O; ++nd) {
          o[mi][nd][2 * h] *= alpha;
          o[mi][nd][2 * h + 1] *= alpha;
        }
      }
    }

    fa_wait_all();
    __syncthreads();  // V_j visible; every warp is done with K_j
    kp += BC * HEAD_DIM;
    if (j + 1 < nblk) fa_load_tile<BC>(sK, doffKV, kp);
    fa_commit();

    // ---- O += P V_j
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      unsigned pa[FA_MT][4];
#pragma unroll
      for (int mi = 0; mi < FA_MT; ++mi) {
        pa[mi][0] = fa_pack(s[mi][2 * kk][0], s[mi][2 * kk][1]);
        pa[mi][1] = fa_pack(s[mi][2 * kk][2], s[mi][2 * kk][3]);
        pa[mi][2] = fa_pack(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);
        pa[mi][3] = fa_pack(s[mi][2 * kk + 1][2], s[mi][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < HEAD_DIM / 16; ++dp) {
        unsigned v0, v1, v2, v3;
        fa_ldsm_x4_t(fa_addr<BC>(sV, preV, dp, kk * 16), v0, v1, v2, v3);
#pragma unroll
        for (int mi = 0; mi < FA_MT; ++mi) {
          fa_mma(o[mi][2 * dp], pa[mi], v0, v1);
          fa_mma(o[mi][2 * dp + 1], pa[mi], v2, v3);
        }
      }
    }
  }
  fa_wait_all();

  // ---- epilogue: O /= l (the quad's partial row sums added first), bf16, 4-byte stores
  fa_bf16* Ob = O + (bh * N + (long long)qb * BR + row0) * HEAD_DIM;
#pragma unroll
  for (int mi = 0; mi < FA_MT; ++mi) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float lt = l[mi][h];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      const float inv = 1.0f / lt;
      const int r = mi * 16 + (lane >> 2) + 8 * h;
#pragma unroll
      for (int nd = 0; nd < FA_NT_O; ++nd) {
        const int c = nd * 8 + 2 * (lane & 3);
        *reinterpret_cast<unsigned*>(Ob + (long long)r * HEAD_DIM + c) =
            fa_pack(o[mi][nd][2 * h] * inv, o[mi][nd][2 * h + 1] * inv);
      }
    }
  }
}
