// Microbenchmarks of the H100 memory hierarchy and pipes, driven by validate/micro/run_micro.py
// (compiled with NVRTC through CuPy, -std=c++17; no headers). Every kernel name starts with "micro_" so that
// ncu can filter on it. In-kernel timing uses clock64 (SM cycles); %globaltimer (ns) gives the clock ratio.
// Timing records ("rec") hold 5 long longs per warp (or per block): clock64 start, end, globaltimer start,
// end, %smid.

#define UNROLL 16

static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#include "clock_duty_common.cuh"  // mma_sync_x4
static __device__ __forceinline__ unsigned int smid() {
  unsigned int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
static __device__ __forceinline__ unsigned int smem_u32(const void* p) {
  unsigned int a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
static __device__ __forceinline__ void put_times(long long* rec, long long t0, long long t1, long long g0,
                                                 long long g1) {
  rec[0] = t0;
  rec[1] = t1;
  rec[2] = g0;
  rec[3] = g1;
  rec[4] = (long long)smid();
}
static __device__ __forceinline__ unsigned int warp_id_global() {
  return blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
}

// One instruction per call (asm volatile with a .volatile or explicit cache qualifier, so neither NVVM nor
// ptxas merges repeated loads of one address); the loaded words are folded into one u32.
template <int W> __device__ __forceinline__ unsigned int lds(unsigned int addr);
template <> __device__ __forceinline__ unsigned int lds<4>(unsigned int addr) {
  unsigned int v;
  asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
template <> __device__ __forceinline__ unsigned int lds<8>(unsigned int addr) {
  unsigned int v0, v1;
  asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v0), "=r"(v1) : "r"(addr) : "memory");
  return v0 + v1;
}
template <> __device__ __forceinline__ unsigned int lds<16>(unsigned int addr) {
  unsigned int v0, v1, v2, v3;
  asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(addr) : "memory");
  return (v0 + v1) ^ (v2 + v3);
}
// CACHE: 0 = ld.global (default policy), 1 = ld.global.ca (cache in L1), 2 = ld.global.cg (L2 only)
template <int W, int CACHE> __device__ __forceinline__ unsigned int ldg(const void* p);
#define LDG_SPEC(CACHE, Q)                                                                                  \
  template <> __device__ __forceinline__ unsigned int ldg<4, CACHE>(const void* p) {                       \
    unsigned int v;                                                                                        \
    asm volatile("ld.global" Q ".u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");                            \
    return v;                                                                                              \
  }                                                                                                        \
  template <> __device__ __forceinline__ unsigned int ldg<8, CACHE>(const void* p) {                       \
    unsigned int v0, v1;                                                                                   \
    asm volatile("ld.global" Q ".v2.u32 {%0, %1}, [%2];" : "=r"(v0), "=r"(v1) : "l"(p) : "memory");        \
    return v0 + v1;                                                                                        \
  }                                                                                                        \
  template <> __device__ __forceinline__ unsigned int ldg<16, CACHE>(const void* p) {                      \
    unsigned int v0, v1, v2, v3;                                                                           \
    asm volatile("ld.global" Q ".v4.u32 {%0, %1, %2, %3}, [%4];"                                           \
                 : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "l"(p) : "memory");                             \
    return (v0 + v1) ^ (v2 + v3);                                                                          \
  }
LDG_SPEC(0, "")
LDG_SPEC(1, ".ca")
LDG_SPEC(2, ".cg")

// ---------------------------------------------------------------------------------------------------------
// 1. Shared-memory strides. Every warp of the block issues the same pattern UNROLL*iters times: lane l reads
// the W-byte element l*stride (stride 0 = broadcast). 16 KB of shared memory covers 31*32*16 + 16 bytes.
#define SMEM_WORDS 4096
template <int W>
__device__ __forceinline__ void smem_ld(int stride, int iters, unsigned int* out, long long* rec) {
  __shared__ __align__(16) unsigned int s[SMEM_WORDS];
  for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) s[i] = i * 2654435761u;
  __syncthreads();
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int addr = smem_u32(s) + lane * (unsigned int)stride * W;
  unsigned int acc = 0;
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= lds<W>(addr);
  }
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (lane == 0) put_times(rec + 5 * warp_id_global(), t0, t1, g0, g1);
  if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void micro_smem_ld_w4(int stride, int iters, unsigned int* out, long long* rec) {
  smem_ld<4>(stride, iters, out, rec);
}
extern "C" __global__ void micro_smem_ld_w8(int stride, int iters, unsigned int* out, long long* rec) {
  smem_ld<8>(stride, iters, out, rec);
}
extern "C" __global__ void micro_smem_ld_w16(int stride, int iters, unsigned int* out, long long* rec) {
  smem_ld<16>(stride, iters, out, rec);
}

// ---------------------------------------------------------------------------------------------------------
// 2a. Global-memory strides (coalescing), data from DRAM: warp access g covers W-byte elements
// [g*32*stride, (g+1)*32*stride); lane l reads element (g*32 + l)*stride. Warps take g = gw, gw + nw, ...,
// four accesses in flight per thread.
template <int W>
__device__ __forceinline__ void gld(const char* buf, long long n_access, int stride, unsigned int* out) {
  const long long nw = (long long)gridDim.x * (blockDim.x / 32);
  const long long gw = warp_id_global();
  const unsigned int lane = threadIdx.x % 32;
  unsigned int acc = 0;
  for (long long g = gw; g < n_access; g += 4 * nw) {
    unsigned int v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const long long gg = g + u * nw;
      v[u] = 0;
      if (gg < n_access) v[u] = ldg<W, 0>(buf + ((gg * 32 + lane) * stride) * W);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u];
  }
  if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void micro_gld_w4(const char* buf, long long n_access, int stride, unsigned int* out) {
  gld<4>(buf, n_access, stride, out);
}
extern "C" __global__ void micro_gld_w8(const char* buf, long long n_access, int stride, unsigned int* out) {
  gld<8>(buf, n_access, stride, out);
}
extern "C" __global__ void micro_gld_w16(const char* buf, long long n_access, int stride, unsigned int* out) {
  gld<16>(buf, n_access, stride, out);
}

// 2b. L1-resident: every warp of a block re-reads one pattern (lane l -> element l*stride) at 16 copies
// 4 KB apart in the block's own region, with plain ld.global (LDG.E, cached in L1 by default). Trip `it`
// reads copies (it % 8) + u, u = 0..7, as immediate offsets from one per-trip base: the 8 loads of a trip have
// distinct addresses and the base depends on the trip, so ptxas can neither merge nor hoist them (it does
// both with repeated identical loads), and each load costs about one extra instruction (the XOR).
// After the first 8 trips every load hits in L1.
#define L1_COPIES 8
#define L1_COPY_BYTES 4096
template <int W>
__device__ __forceinline__ void l1_ld(const char* buf, long long region_bytes, int stride, int iters,
                                      unsigned int* out, long long* rec) {
  const unsigned int lane = threadIdx.x % 32;
  const char* p = buf + blockIdx.x * region_bytes + (long long)lane * stride * W;
  unsigned int acc = 0;
#pragma unroll 1
  for (int c = 0; c < 2 * L1_COPIES; ++c) acc ^= ldg<W, 0>(p + c * L1_COPY_BYTES);
  __syncthreads();
  const long long g0 = gtimer();
  const long long t0 = clock64();
#pragma unroll 1  // no cross-trip unrolling: ptxas could then merge trips it and it+8
  for (int it = 0; it < iters; ++it) {
    const char* q = p + (it % L1_COPIES) * L1_COPY_BYTES;
#pragma unroll
    for (int u = 0; u < L1_COPIES; ++u) acc ^= ldg<W, 0>(q + u * L1_COPY_BYTES);
  }
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (lane == 0) put_times(rec + 5 * warp_id_global(), t0, t1, g0, g1);
  if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void micro_l1_ld_w4(const char* buf, long long region_bytes, int stride, int iters,
                                          unsigned int* out, long long* rec) {
  l1_ld<4>(buf, region_bytes, stride, iters, out, rec);
}
extern "C" __global__ void micro_l1_ld_w8(const char* buf, long long region_bytes, int stride, int iters,
                                          unsigned int* out, long long* rec) {
  l1_ld<8>(buf, region_bytes, stride, iters, out, rec);
}
extern "C" __global__ void micro_l1_ld_w16(const char* buf, long long region_bytes, int stride, int iters,
                                           unsigned int* out, long long* rec) {
  l1_ld<16>(buf, region_bytes, stride, iters, out, rec);
}

// ---------------------------------------------------------------------------------------------------------
// 3. Pointer chase, one thread: p = *p with plain ld.global.u64 (LDG.E.64, L1-cached by default); each
// element holds the address of the next, so no address arithmetic sits between the loads.
// out[0] = cycles of `steps` timed loads after `warm` untimed ones; out[1] = final p; out[2] = ns.
static __device__ __forceinline__ unsigned long long ld_ptr(unsigned long long p) {
  unsigned long long v;
  asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
extern "C" __global__ void micro_chase(unsigned long long start, long long warm, long long steps, long long* out) {
  unsigned long long p = start;
  for (long long i = 0; i < warm; ++i) p = ld_ptr(p);
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (long long i = 0; i < steps; ++i) p = ld_ptr(p);
  const long long t1 = clock64();
  const long long g1 = gtimer();
  out[0] = t1 - t0;
  out[1] = (long long)p;
  out[2] = g1 - g0;
}
// Same, one latency sample per load: the loaded pointer is stored (volatile) before the second clock read,
// so in-order issue makes that read wait for the load. No shared memory is used (a kernel with shared
// memory may get a larger carve-out and so a smaller L1).
#define CHASE_SAMPLES 2048
extern "C" __global__ void micro_chase_samples(unsigned long long start, long long warm, unsigned int* lat,
                                               volatile unsigned long long* sink) {
  unsigned long long p = start;
  for (long long i = 0; i < warm; ++i) p = ld_ptr(p);
  for (int i = 0; i < CHASE_SAMPLES; ++i) {
    const unsigned int t0 = (unsigned int)clock64();
    p = ld_ptr(p);
    sink[0] = p;
    const unsigned int t1 = (unsigned int)clock64();
    lat[i] = t1 - t0;
  }
}
// Shared-memory pointer chase (one thread): each word holds the shared address of the next word of a random
// cycle over n words, so j = ld.volatile.shared [j] has no address arithmetic.
extern "C" __global__ void micro_smem_chase(const unsigned int* perm, int n, int steps, long long* out) {
  __shared__ unsigned int s[8192];
  const unsigned int base = smem_u32(s);
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = base + 4 * perm[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned int j = base;
  for (int i = 0; i < 256; ++i) j = lds<4>(j);
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = lds<4>(j);
  const long long t1 = clock64();
  out[0] = t1 - t0;
  out[1] = j;
}

// ---------------------------------------------------------------------------------------------------------
// 4. Bandwidth. Read: every thread reads 16-byte vectors, grid-stride, 4 in flight, with ld.global.cg (L2
// only, so a block re-reading its part of an L2-resident buffer cannot hit in L1), `reps` passes.
// Copy: 16-byte vectors, grid-stride. Block 0 / thread 0 records clock64 and globaltimer.
extern "C" __global__ void micro_read(const uint4* buf, long long n, int reps, unsigned int* out, long long* rec) {
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long nt = (long long)gridDim.x * blockDim.x;
  const long long g0 = gtimer();
  const long long t0 = clock64();
  unsigned int acc = 0;
  for (int r = 0; r < reps; ++r) {
    for (long long i = tid; i < n; i += 4 * nt) {
      unsigned int v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = (i + u * nt < n) ? ldg<16, 2>(buf + i + u * nt) : 0u;
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u];
    }
  }
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  if (acc == 0x9e3779b9u) out[0] = acc;
}
// Read with plain loads (L1-cached): in pass r every thread starts `r * rot` vectors further on, so an SM
// never re-reads the data it read in the previous pass and L1 cannot serve it (L2 bandwidth, not L1).
extern "C" __global__ void micro_read_rot(const uint4* buf, long long n, int reps, long long rot, unsigned int* out,
                                          long long* rec) {
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long nt = (long long)gridDim.x * blockDim.x;
  const long long g0 = gtimer();
  const long long t0 = clock64();
  unsigned int acc = 0;
  for (int r = 0; r < reps; ++r) {
    const long long off = ((long long)r * rot) % n;
    for (long long i = tid; i < n; i += 4 * nt) {
      unsigned int v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        long long k = i + u * nt + off;
        if (k >= n) k -= n;
        v[u] = (i + u * nt < n) ? ldg<16, 0>(buf + k) : 0u;
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u];
    }
  }
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void micro_copy(const uint4* src, uint4* dst, long long n) {
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long nt = (long long)gridDim.x * blockDim.x;
  for (long long i = tid; i < n; i += 4 * nt) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (i + u * nt < n) v[u] = src[i + u * nt];
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (i + u * nt < n) dst[i + u * nt] = v[u];
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Pipes. Throughput kernels: 8 independent chains per thread, UNROLL steps per trip; rec per block.
extern "C" __global__ void micro_ffma_tp(float a, float b, int iters, float* out, long long* rec) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 0.001f + c;
  __syncthreads();
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) out[0] = s;
}
// IADD: Fibonacci pairs (p += q; q += p) cannot be folded into a multiply; 4 pairs = 8 chains.
extern "C" __global__ void micro_iadd_tp(unsigned int a, int iters, unsigned int* out, long long* rec) {
  unsigned int p[4], q[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    p[c] = threadIdx.x + c;
    q[c] = a + c;
  }
  __syncthreads();
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL / 2; ++u) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        p[c] += q[c];
        q[c] += p[c];
      }
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  unsigned int s = 0;
#pragma unroll
  for (int c = 0; c < 4; ++c) s ^= p[c] ^ q[c];
  if (s == 0x9e3779b9u) out[0] = s;
}
extern "C" __global__ void micro_ex2_tp(int iters, float* out, long long* rec) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = -0.001f * (threadIdx.x % 7) - 0.1f * c;
  __syncthreads();
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < 8; ++c) asm volatile("ex2.approx.f32 %0, %0;" : "+f"(x[c]));
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) out[0] = s;
}
// mma.sync m16n8k16 bf16 -> f32, 4 independent accumulators per warp.
extern "C" __global__ void micro_mma_bf16_tp(unsigned int seed, int iters, float* out, long long* rec) {
  const unsigned int a0 = seed ^ threadIdx.x, a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u, b0 = a0 * 11u, b1 = a0 * 13u;
  float d[4][4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#pragma unroll
    for (int e = 0; e < 4; ++e) d[c][e] = 0.0f;
  }
  __syncthreads();
  const long long g0 = gtimer();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < 4; ++u) mma_sync_x4(d, a0, a1, a2, a3, b0, b1);
  }
  __syncthreads();
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (threadIdx.x == 0) put_times(rec + 5 * blockIdx.x, t0, t1, g0, g1);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < 4; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) out[0] = s;
}
// Dependent-chain latencies, one thread: FFMA, and the pipe round trip of IADD3 (p += q; q += p).
extern "C" __global__ void micro_ffma_lat(float a, float b, int steps, float* out, long long* cyc) {
  float x = a;
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) x = fmaf(x, a, b);
  }
  const long long t1 = clock64();
  cyc[0] = t1 - t0;
  out[0] = x;
}
// __syncthreads cost: every thread of the block passes `iters` barriers; thread 0 times them.
extern "C" __global__ void micro_syncthreads(int iters, long long* cyc) {
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) __syncthreads();
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}
// Clock ratio: thread 0 spins for `spin` SM cycles; out = clock64 and globaltimer deltas.
extern "C" __global__ void micro_clock(long long spin, long long* out) {
  const long long g0 = gtimer();
  const long long t0 = clock64();
  long long t = t0;
  while (t - t0 < spin) t = clock64();
  const long long g1 = gtimer();
  out[0] = t - t0;
  out[1] = g1 - g0;
}

// ---------------------------------------------------------------------------------------------------------
// 6. ldmatrix: a warp loads 8x8 b16 matrices from a 64-row tile with 128-byte rows (a K=64 bf16 tile).
// Lane l gives the row address of matrix m = l/8, row r = l%8: tile row (m%2)*8 + r, 16-B chunk m/2 (x4 reads
// a 16x16 block). With swizzle the chunk index is XORed with (row % 8) (the 128B swizzle of TMA/CuTe).
// Unrolled instruction u of trip `it` reads tile copy (it + u) % 8 (copies 2 KB = 16 rows apart, same bank
// pattern), so ptxas can neither merge nor hoist the ldmatrix instructions.
#define LDSM_COPIES 8
template <int X>
__device__ __forceinline__ void ldsm(int swizzle, int iters, unsigned int* out, long long* rec) {
  __shared__ __align__(1024) unsigned int s[LDSM_COPIES * 16 * 32];
  for (int i = threadIdx.x; i < LDSM_COPIES * 16 * 32; i += blockDim.x) s[i] = i;
  __syncthreads();
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int m = lane / 8, r = lane % 8;
  const unsigned int row = (m % 2) * 8 + r;
  unsigned int chunk = m / 2;
  if (swizzle) chunk ^= row % 8;
  const unsigned int addr = smem_u32(s) + row * 128 + chunk * 16;
  unsigned int acc = 0;
  const long long g0 = gtimer();
  const long long t0 = clock64();
#pragma unroll 1  // see l1_ld
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < LDSM_COPIES; ++u) {
      const unsigned int a = addr + ((it + u) % LDSM_COPIES) * 2048;
      if (X == 1) {
        unsigned int v0;
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(v0) : "r"(a) : "memory");
        acc ^= v0;
      } else if (X == 2) {
        unsigned int v0, v1;
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                     : "=r"(v0), "=r"(v1) : "r"(a) : "memory");
        acc ^= v0 + v1;
      } else {
        unsigned int v0, v1, v2, v3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(a) : "memory");
        acc ^= (v0 + v1) ^ (v2 + v3);
      }
    }
  }
  const long long t1 = clock64();
  const long long g1 = gtimer();
  if (lane == 0) put_times(rec + 5 * warp_id_global(), t0, t1, g0, g1);
  if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void micro_ldsm_x1(int swizzle, int iters, unsigned int* out, long long* rec) {
  ldsm<1>(swizzle, iters, out, rec);
}
extern "C" __global__ void micro_ldsm_x2(int swizzle, int iters, unsigned int* out, long long* rec) {
  ldsm<2>(swizzle, iters, out, rec);
}
extern "C" __global__ void micro_ldsm_x4(int swizzle, int iters, unsigned int* out, long long* rec) {
  ldsm<4>(swizzle, iters, out, rec);
}
