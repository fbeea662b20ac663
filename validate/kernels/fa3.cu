// gpusim-twin: kernels_ir/attention.py::fa3
// FlashAttention-3 style forward pass for Hopper (sm_90a), the "fa3" design of validate/kernels/TC_DESIGNS.md.
// Q, K, V, O: bf16 [B, H, N, d] contiguous; fp32 accumulation; softmax scale 1/sqrt(d) applied through exp2
// with scale_log2 = log2(e)/sqrt(d) (a kernel argument). grid = (N/BR, H, B), 384 threads = 3 warpgroups:
//   WG0 producer: setmaxnreg.dec 24; thread 0 loads Q once (TMA, 64-column panels, 128B swizzle) and then
//       K_j and V_j into a STAGES-deep ring: K and V each have their own full barrier (TMA complete_tx) and
//       empty barrier (8 arrivals: lane 0 of each consumer warp), so K_{j+1} can land while V_j is in use.
//   WG1, WG2 consumers: setmaxnreg.inc 240; each owns 64 rows of the 128-row Q tile. Per KV block j:
//       S = Q K_j^T by D/16 wgmma m64n{BC}k16 (A = Q, B = K, both K-major shared-memory descriptors), mask
//       (causal blocks crossing the diagonal, keys >= N), online softmax in registers (row max over the quad
//       with shfl.xor, exp2, running sum, O rescale), P to bf16 registers, O += P V_j by BC/16 wgmma
//       m64n{D}k16 with A = P from registers and B = V from shared memory (MN-major descriptor, trans-b).
//   Ping-pong: named barriers 1 and 2 (bar.sync id, 256 / bar.arrive id, 256) give the two consumer WGs
//       turns at the tensor cores. One turn of WG w issues O += P_{j-1} V_{j-1} and S_j = Q K_j^T (one
//       commit group), then hands the turn to the other WG, waits for its group, releases K_j and V_{j-1},
//       and runs the softmax of S_j while the other WG's GEMMs execute. The final turn issues the last PV.
//   Epilogue: O / l, bf16, 4-byte stores straight to global memory.
// Knobs (defines): BR (128 only), BC (64, 128, 176: any multiple of 16 with a wgmma form in fa3_common.cuh),
// HEAD_DIM (64, 128), CAUSAL (0/1), STAGES (>= 1), PV_SPLIT (0: one m64n{D} wgmma per k16 step of PV;
// 1: one m64n64 per 64-column panel of V, no LBO in the V descriptor), PINGPONG (1; 0 drops the named-barrier
// turns, an ablation).
// Shared memory: Q (BR x D) | K ring (STAGES x BC x D) | V ring | mbarriers; every tile is D/64 panels of
// rows x 128 B, 128B-swizzled by TMA, panels 1024-B aligned. Needs N % BR == 0 (any N for the keys: TMA
// zero-fills rows past N and the mask removes them).

#ifndef BR
#define BR 128
#endif
#ifndef BC
#define BC 128
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef PV_SPLIT
#define PV_SPLIT 0
#endif
#ifndef PINGPONG  // 0: no turn-taking between the consumer warpgroups (an ablation; the design is 1)
#define PINGPONG 1
#endif
#if PINGPONG
#define FA3_TURN_SYNC(id) named_bar_sync((id), 256)
#define FA3_TURN_ARRIVE(id) named_bar_arrive((id), 256)
#else
#define FA3_TURN_SYNC(id) ((void)0)
#define FA3_TURN_ARRIVE(id) ((void)0)
#endif

#include "fa3_common.cuh"

static_assert(BR == 128, "two consumer warpgroups of 64 query rows each");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "head dim 64 or 128");
static_assert(BC % 16 == 0 && BC >= 16 && BC <= 256, "BC: a multiple of 16 up to 256");
static_assert(STAGES >= 1 && STAGES <= 8, "STAGES 1..8");

#define FA3_NEG_INF __int_as_float(0xff800000)
#define FA3_D HEAD_DIM
#define FA3_PANELS (FA3_D / 64)
#define FA3_Q_PANEL (BR * 128)
#define FA3_KV_PANEL (BC * 128)
#define FA3_Q_BYTES (BR * FA3_D * 2)
#define FA3_KV_BYTES (BC * FA3_D * 2)
#define FA3_OFF_K FA3_Q_BYTES
#define FA3_OFF_V (FA3_OFF_K + STAGES * FA3_KV_BYTES)
#define FA3_OFF_BAR (FA3_OFF_V + STAGES * FA3_KV_BYTES)
#define FA3_NBAR (1 + 4 * STAGES)
// dynamic shared memory the host must give: 1024 B of alignment slack + tiles + barriers
#define FA3_SMEM_BYTES (1024 + FA3_OFF_BAR + 8 * FA3_NBAR)
static_assert(FA3_KV_PANEL % 1024 == 0, "V/K panels must stay 1024-B aligned");
static_assert(FA3_SMEM_BYTES <= 227 * 1024, "more than 227 KiB of shared memory");

// read by the host (cuModuleGetGlobal): smem bytes, BR, BC, HEAD_DIM, CAUSAL, STAGES, PV_SPLIT, threads
extern "C" __device__ int fa3_config[8] = {FA3_SMEM_BYTES, BR, BC, HEAD_DIM, CAUSAL, STAGES, PV_SPLIT, 384};

template <int NN>
struct Wg;  // wgmma forms by N
template <>
struct Wg<64> {
  static __device__ __forceinline__ void ss(float (&d)[32], unsigned a, unsigned b, unsigned hi, int sc) {
    wgmma_ss_n64(d, a, b, hi, sc);
  }
  static __device__ __forceinline__ void rs(float (&d)[32], const unsigned* p, unsigned b, unsigned hi) {
    wgmma_rs_n64(d, p[0], p[1], p[2], p[3], b, hi);
  }
};
template <>
struct Wg<128> {
  static __device__ __forceinline__ void ss(float (&d)[64], unsigned a, unsigned b, unsigned hi, int sc) {
    wgmma_ss_n128(d, a, b, hi, sc);
  }
  static __device__ __forceinline__ void rs(float (&d)[64], const unsigned* p, unsigned b, unsigned hi) {
    wgmma_rs_n128(d, p[0], p[1], p[2], p[3], b, hi);
  }
};
template <>
struct Wg<176> {
  static __device__ __forceinline__ void ss(float (&d)[88], unsigned a, unsigned b, unsigned hi, int sc) {
    wgmma_ss_n176(d, a, b, hi, sc);
  }
};

// S = Q K^T for one KV slot: D/16 wgmma m64n{BC}k16 (scale_d = 0 on the first: S starts from zero)
static __device__ __forceinline__ void issue_qk(float (&sacc)[BC / 2], unsigned q_lo, unsigned k_lo, unsigned hi) {
#pragma unroll
  for (int kk = 0; kk < FA3_D / 16; ++kk) {
    const unsigned off_q = (kk / 4) * FA3_Q_PANEL + (kk % 4) * 32;
    const unsigned off_k = (kk / 4) * FA3_KV_PANEL + (kk % 4) * 32;
    Wg<BC>::ss(sacc, q_lo + (off_q >> 4), k_lo + (off_k >> 4), hi, kk > 0 ? 1 : 0);
  }
}
// O += P V for one KV slot: BC/16 k16 steps, A = P (registers), B = V (MN-major)
static __device__ __forceinline__ void issue_pv(float (&o)[FA3_D / 2], const unsigned (&pf)[BC / 4], unsigned v_lo,
                                                unsigned hi) {
#pragma unroll
  for (int kk = 0; kk < BC / 16; ++kk) {
    const unsigned lo = v_lo + ((kk * 16 * 128) >> 4);
#if PV_SPLIT
#pragma unroll
    for (int p = 0; p < FA3_PANELS; ++p)
      Wg<64>::rs(*reinterpret_cast<float(*)[32]>(&o[32 * p]), &pf[4 * kk], lo + ((p * FA3_KV_PANEL) >> 4), hi);
#else
    Wg<FA3_D>::rs(o, &pf[4 * kk], lo, hi);
#endif
  }
}

// Mask, online softmax of S (block j), rescale O, P -> bf16 registers.
// Thread layout of a 64 x n accumulator: rows r0 = 16*warp + lane/4 (entries 4jj+0,1) and r0 + 8 (4jj+2,3),
// columns 8jj + 2*(lane%4) + {0,1}.
static __device__ __forceinline__ void softmax_step(float (&sacc)[BC / 2], float (&o)[FA3_D / 2], unsigned (&pf)[BC / 4],
                                                    float& m0, float& m1, float& l0, float& l1, int key0,
                                                    bool need_mask, int q0, int q1, int cq, int N,
                                                    float scale_log2) {
  if (need_mask) {
#pragma unroll
    for (int jj = 0; jj < BC / 8; ++jj) {
#pragma unroll
      for (int b = 0; b < 2; ++b) {
        const int key = key0 + 8 * jj + cq + b;
#if CAUSAL
        if (key > q0 || key >= N) sacc[4 * jj + b] = FA3_NEG_INF;
        if (key > q1 || key >= N) sacc[4 * jj + 2 + b] = FA3_NEG_INF;
#else
        if (key >= N) {
          sacc[4 * jj + b] = FA3_NEG_INF;
          sacc[4 * jj + 2 + b] = FA3_NEG_INF;
        }
#endif
      }
    }
  }
  float mx0 = m0, mx1 = m1;
#pragma unroll
  for (int jj = 0; jj < BC / 8; ++jj) {
    mx0 = fmaxf(mx0, fmaxf(sacc[4 * jj], sacc[4 * jj + 1]));
    mx1 = fmaxf(mx1, fmaxf(sacc[4 * jj + 2], sacc[4 * jj + 3]));
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
  const float ms0 = mx0 == FA3_NEG_INF ? 0.f : mx0 * scale_log2;  // a row with every key masked so far
  const float ms1 = mx1 == FA3_NEG_INF ? 0.f : mx1 * scale_log2;
  const float al0 = fast_exp2(m0 * scale_log2 - ms0);  // exp2(-inf) = 0 on the first block
  const float al1 = fast_exp2(m1 * scale_log2 - ms1);
  m0 = mx0;
  m1 = mx1;
  float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
  for (int jj = 0; jj < BC / 8; ++jj) {
    const float p0 = fast_exp2(fmaf(sacc[4 * jj], scale_log2, -ms0));
    const float p1 = fast_exp2(fmaf(sacc[4 * jj + 1], scale_log2, -ms0));
    const float p2 = fast_exp2(fmaf(sacc[4 * jj + 2], scale_log2, -ms1));
    const float p3 = fast_exp2(fmaf(sacc[4 * jj + 3], scale_log2, -ms1));
    rs0 += p0 + p1;
    rs1 += p2 + p3;
    pf[2 * jj] = pack_bf16(p0, p1);      // k16 step kk uses pf[4kk..4kk+3]: the wgmma A-fragment order
    pf[2 * jj + 1] = pack_bf16(p2, p3);
  }
  l0 = l0 * al0 + rs0;  // per-thread partial row sums; the quad sums them in the epilogue
  l1 = l1 * al1 + rs1;
#pragma unroll
  for (int jj = 0; jj < FA3_D / 8; ++jj) {
    o[4 * jj] *= al0;
    o[4 * jj + 1] *= al0;
    o[4 * jj + 2] *= al1;
    o[4 * jj + 3] *= al1;
  }
}

extern "C" __global__ void __launch_bounds__(384, 1)
    fa3(const __grid_constant__ TmaMap tmQ, const __grid_constant__ TmaMap tmK, const __grid_constant__ TmaMap tmV,
        unsigned short* __restrict__ O, int N, float scale_log2) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned sQ = base, sK = base + FA3_OFF_K, sV = base + FA3_OFF_V, bars = base + FA3_OFF_BAR;
  // barrier addresses: Q, fullK[s], emptyK[s], fullV[s], emptyV[s]
#define BAR_Q (bars)
#define BAR_FULLK(s) (bars + 8u * (1u + (s)))
#define BAR_EMPTYK(s) (bars + 8u * (1u + STAGES + (s)))
#define BAR_FULLV(s) (bars + 8u * (1u + 2 * STAGES + (s)))
#define BAR_EMPTYV(s) (bars + 8u * (1u + 3 * STAGES + (s)))

  const int qb = blockIdx.x;
  const int bh = blockIdx.z * gridDim.y + blockIdx.y;  // b * H + h
  const int kv_total = (N + BC - 1) / BC;
#if CAUSAL
  const int kv_causal = ((qb + 1) * BR - 1) / BC + 1;
  const int n_blocks = kv_causal < kv_total ? kv_causal : kv_total;
#else
  const int n_blocks = kv_total;
#endif
  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;

  if (threadIdx.x == 0) {
    mbar_init(BAR_Q, 1);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(BAR_FULLK(s), 1);
      mbar_init(BAR_EMPTYK(s), 8);
      mbar_init(BAR_FULLV(s), 1);
      mbar_init(BAR_EMPTYV(s), 8);
    }
    fence_mbar_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ------------------------------------------------------------------------------------------ producer
    setmaxnreg_dec<24>();
    if (tid == 0) {
      tma_prefetch_map(&tmQ);
      tma_prefetch_map(&tmK);
      tma_prefetch_map(&tmV);
      mbar_expect_tx(BAR_Q, FA3_Q_BYTES);
#pragma unroll
      for (int p = 0; p < FA3_PANELS; ++p) tma_load_3d(sQ + p * FA3_Q_PANEL, &tmQ, p * 64, qb * BR, bh, BAR_Q);
      for (int j = 0; j < n_blocks; ++j) {
        const int s = j % STAGES;
        const unsigned ph = ((j / STAGES) & 1) ^ 1;  // use u = j / STAGES of slot s waits for release u - 1
        if (j >= STAGES) mbar_wait(BAR_EMPTYK(s), ph);
        mbar_expect_tx(BAR_FULLK(s), FA3_KV_BYTES);
#pragma unroll
        for (int p = 0; p < FA3_PANELS; ++p)
          tma_load_3d(sK + s * FA3_KV_BYTES + p * FA3_KV_PANEL, &tmK, p * 64, j * BC, bh, BAR_FULLK(s));
        if (j >= STAGES) mbar_wait(BAR_EMPTYV(s), ph);
        mbar_expect_tx(BAR_FULLV(s), FA3_KV_BYTES);
#pragma unroll
        for (int p = 0; p < FA3_PANELS; ++p)
          tma_load_3d(sV + s * FA3_KV_BYTES + p * FA3_KV_PANEL, &tmV, p * 64, j * BC, bh, BAR_FULLV(s));
      }
    }
  } else {
    // ------------------------------------------------------------------------------------------ consumers
    setmaxnreg_inc<240>();
    const int w = wg - 1;  // 0: WG1, 1: WG2
    const int warp = tid / 32, lane = tid % 32;
    const int r0 = warp * 16 + lane / 4;  // this thread's rows r0 and r0 + 8 of the WG's 64
    const int q0 = qb * BR + w * 64 + r0, q1 = q0 + 8;
    const int cq = 2 * (lane % 4);  // column of this thread inside each n8 block

    float o[FA3_D / 2];
    float sacc[BC / 2];
    unsigned pf[BC / 4];
#pragma unroll
    for (int i = 0; i < FA3_D / 2; ++i) o[i] = 0.f;
    float m0 = FA3_NEG_INF, m1 = FA3_NEG_INF, l0 = 0.f, l1 = 0.f;

    const unsigned hi = desc_hi_128b(1024);                 // SBO 1024 B (8 rows of 128 B), 128B swizzle
    const unsigned q_lo = desc_lo(sQ + w * 64 * 128, 16);   // K-major, LBO unused (16 B)
    const unsigned k_lo = desc_lo(sK, 16);
    const unsigned v_lo = desc_lo(sV, FA3_KV_PANEL);        // MN-major, LBO = bytes between 64-column panels
#if CAUSAL
    const int qmin = qb * BR + w * 64;  // first query row of this WG
#endif
#if CAUSAL
#define FA3_NEED_MASK(key0) ((key0) + BC - 1 > qmin || (key0) + BC > N)
#else
#define FA3_NEED_MASK(key0) ((key0) + BC > N)
#endif

    if (w == 1) FA3_TURN_ARRIVE(1);  // WG1 takes the first turn
    mbar_wait(BAR_Q, 0);

    // turn 0: S_0 = Q K_0^T
    mbar_wait(BAR_FULLK(0), 0);
    FA3_TURN_SYNC(1 + w);
    wgmma_fence();
    issue_qk(sacc, q_lo, k_lo, hi);
    wgmma_commit();
    FA3_TURN_ARRIVE(2 - w);  // the other WG's turn
    wgmma_wait<0>();
    fence_regs(sacc);
    if (lane == 0) mbar_arrive(BAR_EMPTYK(0));
    softmax_step(sacc, o, pf, m0, m1, l0, l1, 0, FA3_NEED_MASK(0), q0, q1, cq, N, scale_log2);

    // turns 1 .. n-1: O += P_{j-1} V_{j-1} and S_j = Q K_j^T in one commit group
    for (int j = 1; j < n_blocks; ++j) {
      const int s = j % STAGES;
      const int sp = (j - 1) % STAGES;
      mbar_wait(BAR_FULLK(s), (j / STAGES) & 1);
      mbar_wait(BAR_FULLV(sp), ((j - 1) / STAGES) & 1);
      FA3_TURN_SYNC(1 + w);
      fence_regs(o);
      fence_regs(pf);
      wgmma_fence();
      issue_pv(o, pf, v_lo + ((sp * FA3_KV_BYTES) >> 4), hi);
      issue_qk(sacc, q_lo, k_lo + ((s * FA3_KV_BYTES) >> 4), hi);
      wgmma_commit();
      FA3_TURN_ARRIVE(2 - w);
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(sacc);
      fence_regs(pf);
      if (lane == 0) {
        mbar_arrive(BAR_EMPTYV(sp));
        mbar_arrive(BAR_EMPTYK(s));
      }
      const int key0 = j * BC;
      softmax_step(sacc, o, pf, m0, m1, l0, l1, key0, FA3_NEED_MASK(key0), q0, q1, cq, N, scale_log2);
    }

    // last turn: O += P_{n-1} V_{n-1}
    {
      const int sp = (n_blocks - 1) % STAGES;
      mbar_wait(BAR_FULLV(sp), ((n_blocks - 1) / STAGES) & 1);
      FA3_TURN_SYNC(1 + w);
      fence_regs(o);
      fence_regs(pf);
      wgmma_fence();
      issue_pv(o, pf, v_lo + ((sp * FA3_KV_BYTES) >> 4), hi);
      wgmma_commit();
      if (w == 0) FA3_TURN_ARRIVE(2);  // WG2's last turn; WG2 has no one left to hand over to
      wgmma_wait<0>();
      fence_regs(o);
      if (lane == 0) mbar_arrive(BAR_EMPTYV(sp));
    }

    // ---- epilogue: O / l -> bf16, 4-byte stores
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f;
    const float inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
    unsigned short* o0 = O + ((long long)bh * N + q0) * FA3_D + cq;
    unsigned short* o1 = O + ((long long)bh * N + q1) * FA3_D + cq;
#pragma unroll
    for (int jj = 0; jj < FA3_D / 8; ++jj) {
      if (q0 < N) *reinterpret_cast<unsigned*>(o0 + 8 * jj) = pack_bf16(o[4 * jj] * inv0, o[4 * jj + 1] * inv0);
      if (q1 < N)
        *reinterpret_cast<unsigned*>(o1 + 8 * jj) = pack_bf16(o[4 * jj + 2] * inv1, o[4 * jj + 3] * inv1);
    }
  }
}
