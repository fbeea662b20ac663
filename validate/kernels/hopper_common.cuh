// Shared device code of the sm_90a twins (TMA, mbarrier, wgmma, clusters), inline PTX only: no CUDA headers,
// so NVRTC (CuPy RawModule, options -std=c++17 --gpu-architecture=sm_90a -I validate/kernels) and
// nvcc -arch=sm_90a both build it. Used by hgemm_tma_wgmma.cu, hgemm_ws.cu, hgemm_ws_cluster.cu,
// hgemm_persistent.cu (and readable by the FA3 twin). Facts from the PTX ISA (8.0+): mbarrier phases and
// transaction counts, cp.async.bulk.tensor, wgmma matrix descriptors, cluster shared-memory addressing.
//
// Knobs read here (preprocessor): SWIZZLE (32, 64, 128: the TMA swizzle span in bytes and the wgmma
// descriptor's layout), TMAP_GLOBAL (tensor maps passed as pointers to global memory instead of by value),
// HANG_CYCLES (a wait that has not completed after this many SM cycles traps instead of hanging the GPU).
#pragma once

#ifndef SWIZZLE
#define SWIZZLE 128
#endif
#if SWIZZLE != 32 && SWIZZLE != 64 && SWIZZLE != 128
#error "SWIZZLE must be 32, 64 or 128"
#endif
#ifndef HANG_CYCLES
#define HANG_CYCLES 4000000000LL
#endif

typedef unsigned short bf16_t;  // raw bf16 bits

// ------------------------------------------------------------------------------------------ tensor maps
// A CUtensorMap is 128 opaque bytes, 64-byte aligned (cuda.h declares it alignas(128) since CUDA 12.x).
struct alignas(128) TmaMap {
  unsigned long long w[16];
};
#ifdef TMAP_GLOBAL
#define TMAP_ARG(name) const TmaMap* __restrict__ name
#define TMAP_ADDR(name) ((unsigned long long)(name))
#else
#define TMAP_ARG(name) const __grid_constant__ TmaMap name
#define TMAP_ADDR(name) ((unsigned long long)(&(name)))
#endif

// ------------------------------------------------------------------------------------------ shared memory
static __device__ __forceinline__ unsigned int smem_u32(const void* p) {
  unsigned int a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// Layout of one tile operand of R rows x 64 bf16 columns (one 64-column "panel") in shared memory, as TMA
// writes it: SWIZZLE = 128: rows of 128 B, byte (r, c) at r*128 + 2c, then the 16-B chunk index XOR r % 8.
// SWIZZLE = 64 / 32: a TMA box may be at most SWIZZLE bytes wide, so the panel is stored as 128/SWIZZLE
// sub-panels of R rows x SWIZZLE bytes (R*SWIZZLE bytes each, one after the other); inside a sub-panel
// byte (r, c) sits at r*SWIZZLE + 2c, then address bits [4, 4+log2(SWIZZLE/16)) XOR bits [7, ...): the
// hardware's swizzle of the shared-memory address. Tiles start 1024-byte aligned.
#define SPAN SWIZZLE
#define BOXES_PER_PANEL (128 / SPAN)  // TMA boxes per 64-column panel
#define BOX_COLS (SPAN / 2)            // bf16 columns per box

// byte address of the 16-column k-slice ks (0..3) of rows r0.. of a tile of R rows at `tile`
static __device__ __forceinline__ unsigned int kslice_addr(unsigned int tile, int R, int r0, int ks) {
  const int kb = ks * 32;  // byte offset along K of the slice
  return tile + (unsigned int)((kb / SPAN) * R * SPAN + r0 * SPAN + (kb % SPAN));
}

// wgmma shared-memory matrix descriptor (PTX "matrix descriptor format"), K-major, swizzled:
// bits 0-13: start address >> 4; 16-29: leading byte offset >> 4 (unused for swizzled K-major: 1);
// 32-45: stride byte offset >> 4 = 8 rows * SPAN (distance between 8-row core-matrix groups);
// 49-51: base offset (0: tiles are 1024-byte aligned); 62-63: layout 1 = 128B, 2 = 64B, 3 = 32B swizzle.
static __device__ __forceinline__ unsigned long long wg_desc(unsigned int addr) {
  const unsigned long long layout = SPAN == 128 ? 1ull : (SPAN == 64 ? 2ull : 3ull);
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) |
         ((unsigned long long)((8 * SPAN) >> 4) << 32) | (layout << 62);
}

// ------------------------------------------------------------------------------------------ mbarrier
static __device__ __forceinline__ void mbar_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// make the initialisation visible to the other threads of the cluster and to the async proxy
static __device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
static __device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// arrive (count 1) and add `bytes` to the current phase's expected transaction count
static __device__ __forceinline__ void mbar_arrive_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void mbar_arrive(unsigned int bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// arrive on the barrier at the same offset in the shared memory of cluster CTA `rank`, with the default
// semantics (.release at .cta scope): enough to order this thread's completed shared-memory reads (wgmma,
// after wait_group) before the partner's next copy into them, and cheap (no cluster-scope fence)
static __device__ __forceinline__ void mbar_arrive_remote(unsigned int bar, unsigned int rank) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
// the same with .release.cluster (orders all of this thread's earlier memory accesses at cluster scope: a fence
// the arriving warp waits for; hgemm_ws_cluster with it ran 2.1x slower on the H100)
static __device__ __forceinline__ void mbar_arrive_cluster(unsigned int bar, unsigned int rank) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
static __device__ __forceinline__ bool mbar_try(unsigned int bar, unsigned int parity) {
  unsigned int ok;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
static __device__ __forceinline__ bool mbar_try_cluster(unsigned int bar, unsigned int parity) {
  unsigned int ok;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
// Wait until the phase of this parity has completed. A wait that lasts HANG_CYCLES traps (the launch fails
// with an error) rather than hanging the GPU when a barrier protocol is wrong.
static __device__ __forceinline__ void mbar_wait(unsigned int bar, unsigned int parity) {
  if (mbar_try(bar, parity)) return;
  const long long t0 = clock64();
  while (!mbar_try(bar, parity))
    if (clock64() - t0 > HANG_CYCLES) __trap();
}
static __device__ __forceinline__ void mbar_wait_cluster(unsigned int bar, unsigned int parity) {
  if (mbar_try_cluster(bar, parity)) return;
  const long long t0 = clock64();
  while (!mbar_try_cluster(bar, parity))
    if (clock64() - t0 > HANG_CYCLES) __trap();
}

// ------------------------------------------------------------------------------------------ TMA
static __device__ __forceinline__ void tma_prefetch_map(unsigned long long map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
// 2D tile load: box at (x = inner/column, y = row) of the tensor -> shared `dst`; completes `bar`'s tx bytes
static __device__ __forceinline__ void tma_load_2d(unsigned int dst, unsigned long long map, int x, int y,
                                                   unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// the same, multicast to the CTAs of the cluster in `mask` (same shared offsets of data and barrier in each)
static __device__ __forceinline__ void tma_load_2d_mc(unsigned int dst, unsigned long long map, int x, int y,
                                                      unsigned int bar, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}
// Rows [row_off, row_off + box_rows) of a panel tile of R rows at `tile`: columns k0 .. k0+63 of global rows
// y0 .. y0+box_rows-1, as BOXES_PER_PANEL boxes of BOX_COLS x box_rows (the map's box).
static __device__ __forceinline__ void tma_load_panel(unsigned int tile, int R, int row_off,
                                                      unsigned long long map, int k0, int y0, int box_rows,
                                                      unsigned int bar) {
#pragma unroll
  for (int p = 0; p < BOXES_PER_PANEL; ++p)
    tma_load_2d(tile + (unsigned int)(p * R * SPAN + row_off * SPAN), map, k0 + p * BOX_COLS, y0, bar);
  (void)box_rows;
}
static __device__ __forceinline__ void tma_load_panel_mc(unsigned int tile, int R, int row_off,
                                                         unsigned long long map, int k0, int y0, int box_rows,
                                                         unsigned int bar, unsigned short mask) {
#pragma unroll
  for (int p = 0; p < BOXES_PER_PANEL; ++p)
    tma_load_2d_mc(tile + (unsigned int)(p * R * SPAN + row_off * SPAN), map, k0 + p * BOX_COLS, y0, bar,
                   mask);
  (void)box_rows;
}

// ------------------------------------------------------------------------------------------ clusters
static __device__ __forceinline__ unsigned int cluster_ctarank() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// all threads of all CTAs of the cluster (release/acquire)
static __device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// ------------------------------------------------------------------------------------------ warpgroups
template <int N>
static __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
static __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
static __device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

// ------------------------------------------------------------------------------------------ epilogue
// bf16 pair (lo = x at the lower address, hi = y), round to nearest even
static __device__ __forceinline__ unsigned int pack_bf16x2(float x, float y) {
  unsigned int r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(y), "f"(x));
  return r;
}
// Store a warpgroup's 64 x N accumulator tile (N = 2*NACC; NACC floats per thread): thread t (0..127 in the
// warpgroup), warp w = t/32,
// lane l: d[4j], d[4j+1] are row w*16 + l/4, columns 8j + 2(l%4) + {0,1}; d[4j+2], d[4j+3] the row 8 below.
// C is row-major bf16 with leading dimension ldc; (row0, col0) is the tile's corner. 4-byte stores.
template <int NACC>
static __device__ __forceinline__ void store_acc_bf16(const float (&d)[NACC], bf16_t* C, long long ldc,
                                                      long long row0, long long col0, int t) {
  const int w = t >> 5, l = t & 31;
  const long long r = row0 + w * 16 + (l >> 2);
  const long long c = col0 + 2 * (l & 3);
  unsigned int* p0 = reinterpret_cast<unsigned int*>(C + r * ldc + c);
  unsigned int* p1 = reinterpret_cast<unsigned int*>(C + (r + 8) * ldc + c);
#pragma unroll
  for (int j = 0; j < NACC / 4; ++j) {
    p0[4 * j] = pack_bf16x2(d[4 * j], d[4 * j + 1]);  // + 8j columns = 4j words
    p1[4 * j] = pack_bf16x2(d[4 * j + 2], d[4 * j + 3]);
  }
}

// ------------------------------------------------------------------------------------------ wgmma
// wgmma.mma_async m64nNk16, f32 accumulators, bf16 A and B from shared memory (descriptors), scale-d = 1
// (D += A*B), no negation, neither operand transposed (both K-major).
// D (64 x 128 f32, 64 registers per thread) += A (64 x 16, shared) * B (128 x 16, shared, K-major)
static __device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], unsigned long long da,
                                                        unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db)
      : "memory");
}

// D (64 x 256 f32, 128 registers per thread) += A (64 x 16, shared) * B (256 x 16, shared, K-major)
static __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da,
                                                        unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db)
      : "memory");
}
