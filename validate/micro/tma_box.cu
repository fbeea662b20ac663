// What does one 2D TMA box load (cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes)
// cost on the H100, as a function of the box shape: inner width W = 32, 64 or 128 B (16, 32, 64 bf16, with the
// matching 32B/64B/128B swizzle) and R = 32..256 rows? Driven by validate/micro/run_tma_box.py (NVRTC or nvcc for
// sm_90a with -I validate/kernels; the tensor map comes from validate/tma.py and is passed by value as a
// `const __grid_constant__` 128-byte parameter, as in the GEMM twins).
//
// tma_box: one CTA of 128 threads (only thread 0 works; grid = SM count, one CTA per SM, or 1 for an SM alone).
// Dynamic shared memory: `stages` mbarriers (8 B each), padding to 1024 B, then a ring of `stages` slots of
// k = `boxes_per_stage` boxes each (box_bytes = W x R; every slot starts 1024-byte aligned since box_bytes is a
// multiple of 1024). Thread 0 fills the slots in order, m = n / k fills in all: before refilling a slot it waits
// (mbarrier.try_wait.parity) for that slot's previous fill to land, then one mbarrier.arrive.expect_tx of
// k x box_bytes and k tensor loads into the slot. After the last fill it waits for the outstanding ones.
// k = 1 is one box per stage (the plain ring, one barrier per box); k > 1 is the GEMM twins' pattern (one
// expect_tx per stage, several boxes per barrier), which takes the per-box wait/expect_tx out of the loop.
//
// Walk: the tensor (rows x cols bf16, row-major) is cut into nby bands of R rows and nbx boxes of W bytes per band.
// Box number g (x index g % nbx, band g / nbx) is at (x = (g % nbx) * box_cols, y = (g / nbx) * R). CTA b loads
// boxes g = start + b, start + b + G, start + b + 2G, ... (G = gridDim.x), wrapping at nbx * nby: the CTAs together
// walk the tensor in order (adjacent CTAs read adjacent boxes of one band), each box at new coordinates. The walk
// advances with adds and compares only (no division in the loop: see hopper.cu's note on hop_tma_tp).
//
// Timing record per CTA (REC long longs): [0] clock64 just before the first expect_tx, [1] clock64 when fill q0
// (= m / 4) was seen complete, [2] clock64 after the last fill was seen complete, [3] %globaltimer at [0],
// [4] %globaltimer at [2], [5] %smid, [6] sum over fills of the clock64 cycles from before the expect_tx to after
// the fill's last tensor load (the issue cost, clock reads included), [7] q0.
// cycles per box = ([2] - [0]) / n; steady cycles per box = ([2] - [1]) / ((m - 1 - q0) * k).
//
// read_all: a grid-stride read of a buffer (16-byte loads) that keeps nothing: warms an L2-resident tensor, and
// read over a 256 MiB scratch buffer it evicts the 1 GiB tensor from L2 with clean lines only (a flush by writes
// would leave dirty lines whose write-back would land in the next measurement).
#define HANG_CYCLES 400000000LL  // ~0.2 s: a wrong protocol traps instead of hanging the GPU
#include "hopper_common.cuh"

#define REC 8
#define MAX_STAGES 32

static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ unsigned int smid() {
  unsigned int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

extern "C" __global__ void __launch_bounds__(128, 1)
    tma_box(TMAP_ARG(tmap), int n, int stages, int boxes_per_stage, int box_bytes, int box_cols, int box_rows,
            int nbx, int nby, int start, long long* __restrict__ rec) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  if (threadIdx.x != 0) return;
  const unsigned long long map = TMAP_ADDR(tmap);
  tma_prefetch_map(map);
  const unsigned int bars = smem_u32(smem_raw);
  const unsigned int ring = (bars + 8u * MAX_STAGES + 1023u) & ~1023u;
  const int S = stages < 1 ? 1 : (stages > MAX_STAGES ? MAX_STAGES : stages);
  const int k = boxes_per_stage < 1 ? 1 : boxes_per_stage;
  const unsigned int slot_bytes = (unsigned int)(k * box_bytes);  // also the expect_tx of one fill
  for (int s = 0; s < S; ++s) mbar_init(bars + 8u * s, 1);
  fence_mbar_init();
  fence_proxy_async();

  // walk state: box x index xb (0..nbx-1), band yb (0..nby-1); step G boxes = dyb bands + dxb boxes
  const int total = nbx * nby;
  const int G = (int)gridDim.x;
  const int g0 = (int)(((long long)start + blockIdx.x) % total);
  int xb = g0 % nbx, yb = g0 / nbx;
  const int dxb = G % nbx, dyb = (G / nbx) % nby;

  const int m = n / k;  // fills
  const int q0 = m / 4;
  long long t_q0 = 0, issue = 0;
  const long long gt0 = gtimer();
  const long long t0 = clock64();
  int slot = 0, lap = 0;
  for (int f = 0; f < m; ++f) {
    const unsigned int bar = bars + 8u * slot;
    if (f >= S) {  // the slot's previous fill (f - S, lap - 1) must have landed
      mbar_wait(bar, (unsigned int)(lap + 1) & 1u);
      if (f - S == q0) t_q0 = clock64();
    }
    const long long c0 = clock64();
    mbar_arrive_expect_tx(bar, slot_bytes);
    const unsigned int dst = ring + (unsigned int)slot * slot_bytes;
    for (int p = 0; p < k; ++p) {
      tma_load_2d(dst + (unsigned int)(p * box_bytes), map, xb * box_cols, yb * box_rows, bar);
      xb += dxb;
      yb += dyb;
      if (xb >= nbx) {
        xb -= nbx;
        ++yb;
      }
      if (yb >= nby) yb -= nby;
    }
    issue += clock64() - c0;
    if (++slot == S) {
      slot = 0;
      ++lap;
    }
  }
  // drain: fills max(0, m - S) .. m - 1 are still outstanding
  for (int f = (m > S ? m - S : 0); f < m; ++f) {
    mbar_wait(bars + 8u * (f % S), (unsigned int)(f / S) & 1u);
    if (f == q0) t_q0 = clock64();
  }
  const long long t1 = clock64();
  const long long gt1 = gtimer();
  long long* r = rec + (long long)REC * blockIdx.x;
  r[0] = t0;
  r[1] = t_q0;
  r[2] = t1;
  r[3] = gt0;
  r[4] = gt1;
  r[5] = (long long)smid();
  r[6] = issue;
  r[7] = q0;
}

// Grid-stride read of `words16` 16-byte words (ld.global.cg: through L2, not kept in L1); writes sink only when the
// xor of everything read is an impossible value (so the loads stay).
extern "C" __global__ void read_all(const unsigned char* __restrict__ buf, long long words16, unsigned int* sink) {
  unsigned int acc = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words16;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned int a, b, c, d;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "l"(buf + 16 * i));
    acc ^= a ^ b ^ c ^ d;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}
