// Do ldmatrix (or shared loads) and cp.async's writes into shared memory share one data stage of the L1TEX pipe?
// (validate/micro/run_ldsm_cpasync.py) One CTA per SM (120 KiB of dynamic shared memory), two kinds of warp:
// - the "copy" warps [0, cp_warps), by `cp_kind` (the kernel ldsm_cpasync_<cp_kind>_<ld_kind>):
//   0: cp.async.cg of 16 B per lane (from the L2 once the first pass is done), 1: cp.async.ca (from the L1 with a
//   small window), 2: ld.global.cg.v4 into registers (no shared memory; from the L2);
//   8 per batch (4 KiB per warp); cp.async: at most 3 batches in flight (commit, wait_group 2), into a 64 KiB
//   region at the start of shared memory; the source is the CTA's own window of `window_bytes` (a power of two)
//   of `src`, read again and again;
// - the "reader" warps [cp_warps, cp_warps + ld_warps), by `ld_kind`: 0: ldmatrix.x4 of 16-B rows, 1:
//   ld.shared.v4 of 16 B per lane; 4 independent ones per step from a 32 KiB region after it; 512 contiguous bytes
//   per instruction, so 4 wavefronts each (no bank conflicts).
// `active` bit 0 runs the copy warps, bit 1 the reader warps; the others return at once. Lane 0 of every warp
// records its clock64 at start and end in rec[(block * 32 + warp) * 2 + {0, 1}].

template <int kind>
__device__ __forceinline__ void copy16(unsigned dst, const void* src, unsigned& acc) {
  if constexpr (kind == 0) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
  } else if constexpr (kind == 1) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
  } else {
    unsigned r0, r1, r2, r3;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "l"(src));
    acc ^= r0 ^ r1 ^ r2 ^ r3;
  }
}

template <int kind>
__device__ __forceinline__ void read16(unsigned a, unsigned& acc) {
  unsigned r0, r1, r2, r3;
  if constexpr (kind == 0) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  } else {
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  }
  acc ^= r0 ^ r1 ^ r2 ^ r3;
}

template <int cp_kind, int ld_kind>
__device__ __forceinline__ void body(const char* src, long long window_bytes, int cp_warps, int ld_warps,
                                     int cp_batches, int ld_steps, int active, unsigned* sink, long long* rec) {
  extern __shared__ __align__(1024) char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  for (int i = threadIdx.x; i < 96 * 1024 / 4; i += blockDim.x) reinterpret_cast<unsigned*>(smem)[i] = i;
  __syncthreads();
  const bool is_cp = warp < cp_warps, is_ld = !is_cp && warp < cp_warps + ld_warps;
  if ((is_cp && !(active & 1)) || (is_ld && !(active & 2)) || (!is_cp && !is_ld)) return;
  long long t0 = clock64();
  unsigned acc = 0;
  if (is_cp) {
    const char* win = src + (long long)blockIdx.x * window_bytes;
    long long off = (long long)warp * 4096;
#pragma unroll 1
    for (int b = 0; b < cp_batches; ++b) {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const unsigned dst = base + (unsigned)(((warp * 8 + k) * 512 + lane * 16) & (64 * 1024 - 1));
        copy16<cp_kind>(dst, win + ((off + k * 512 + lane * 16) & (window_bytes - 1)), acc);
      }
      if constexpr (cp_kind < 2) {
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group 2;");
      }
      off += (long long)cp_warps * 4096;
    }
    if constexpr (cp_kind < 2) asm volatile("cp.async.wait_all;");
  } else {
    const unsigned region = base + 64 * 1024;
#pragma unroll 1
    for (int s = 0; s < ld_steps; ++s) {
#pragma unroll
      for (int j = 0; j < 4; ++j) read16<ld_kind>(region + (unsigned)((((s * 4 + j) & 63) * 512 + lane * 16)), acc);
    }
  }
  long long t1 = clock64();
  if (acc == 0x12345678u) sink[threadIdx.x] = acc;
  if (lane == 0) {
    rec[(blockIdx.x * 32 + warp) * 2] = t0;
    rec[(blockIdx.x * 32 + warp) * 2 + 1] = t1;
  }
}

// One kernel per (copy kind, reader kind), so that neither loop carries a branch on its kind.
#define LDSM_CPASYNC(C, L)                                                                                        \
  extern "C" __global__ void __launch_bounds__(1024, 1)                                                           \
      ldsm_cpasync_##C##_##L(const char* src, long long window_bytes, int cp_warps, int ld_warps, int cp_batches, \
                             int ld_steps, int active, unsigned* sink, long long* rec) {                          \
    body<C, L>(src, window_bytes, cp_warps, ld_warps, cp_batches, ld_steps, active, sink, rec);                   \
  }
LDSM_CPASYNC(0, 0)
LDSM_CPASYNC(0, 1)
LDSM_CPASYNC(1, 0)
LDSM_CPASYNC(2, 0)
LDSM_CPASYNC(2, 1)
