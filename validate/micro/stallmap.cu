// Which Nsight Compute stall reason each kind of asynchronous wait is reported under on the H100 (driven by
// validate/micro/run_stallmap.py; NVRTC or nvcc for sm_90a with -I validate/kernels). One kernel per kind of wait,
// each launched as one CTA of 256 threads (8 warps, two per SM sub-partition) per SM; in each, the warps named
// spend nearly all their time in that one wait, so the top of ncu's
// smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio ranking names the reason that wait is charged to.
// Every kernel has the same parameters: (src, wrap, reps, sink): src a 1 GiB buffer (HBM-resident: far larger than
// the 50 MB L2) holding at the first 8 bytes of each 128-B line the byte offset of the next line of a pointer chain
// (only wait_global_load reads the values), wrap its size in bytes, reps the trips of the kernel's loop, sink a
// word written only when an impossible value comes out (keeps the results alive). mbarrier waits are
// hopper_common.cuh's mbar_wait (the twins' loop of mbarrier.try_wait.parity with a clock64 bound of HANG_CYCLES
// that __trap()s), so a protocol bug fails the launch instead of hanging the GPU.
//
//   wait_mbar_tma         thread 0 issues one 16 KiB 1D bulk copy (cp.async.bulk ... mbarrier::complete_tx) from
//                         src (a new offset each trip) into shared memory; all 8 warps wait on the mbarrier,
//                         __syncwarp, __syncthreads, then thread 0 issues the next one.
//   wait_mbar_tma_nosync  the same copies with the full/empty protocol of a warp-specialised kernel and no CTA
//                         barrier: every warp waits on `full`, its lane 0 arrives on `empty` (count 8); thread 0
//                         (warp 0, the producer) then waits on `empty` and re-arms `full` (expect_tx + copy).
//   wait_mbar_arrive      warp 0 spins SPIN cycles on clock64, then lane 0 arrives on an mbarrier (count 1);
//                         warps 1..7 wait on it, then their lane 0 arrives on an `ack` mbarrier (count 7) that
//                         warp 0 waits on (already complete by then) before its next arrive.
//   wait_syncthreads      warp 0 spins SPIN cycles, then __syncthreads; warps 1..7 only __syncthreads.
//   wait_named_barrier    the same with bar.sync 1, 256 (a named barrier) for all 8 warps.
//   wait_named_barrier_arrive  warp 0 spins, then bar.arrive 1, 256; warps 1..7 bar.sync 1, 256 (the ping-pong
//                         hand-off of the FA3 twin).
//   wait_wgmma            warpgroup 0 (warps 0-3): wgmma.fence, 4 x wgmma.mma_async m64n256k16 bf16 (A 64 x 64,
//                         B 256 x 64 from zero-filled 128B-swizzled shared memory, the twins' descriptors),
//                         commit_group, wait_group 0, in a loop; warpgroup 1 exits after the set-up.
//   wait_wgmma_skew       the same, but warp 0 spins SPIN_SKEW cycles before each batch: warps 1-3 wait for it
//                         inside the warpgroup-wide wgmma (whatever that is charged to).
//   wait_cp_async         every thread: cp.async.cg 16 B from src (a new 4 KiB per CTA each trip, coalesced),
//                         commit_group, wait_group 0, __syncwarp.
//   wait_global_load      every warp chases pointers through src (one line per load, all lanes the same address,
//                         ld.global.u64): the reference for long_scoreboard.
//   wait_fence_proxy      every thread: st.shared, fence.proxy.async.shared::cta, in a loop (reference for membar).
//   wait_spin_only        control: warp 0 runs the SPIN loop of the kernels above, warps 1..7 exit at once. Its
//                         stall mix is what the spinning warp adds to the wait_mbar_arrive / syncthreads / named
//                         barrier kernels.
#include "hopper_common.cuh"

#ifndef SPIN
#define SPIN 2000
#endif
#ifndef SPIN_SKEW
#define SPIN_SKEW 1000
#endif
#define CHUNK 16384  // bytes of one bulk copy
#define CP_BYTES (256 * 16)  // bytes one CTA moves with cp.async per trip
#define SINK_MAGIC 0x9e3779b9u
#define SINK_FLAG 1023             // sink has 1024 words; this one flags a wgmma kernel built without sm_90a
#define SINK_NO_SM90A 0xBAD090A0u

static __device__ __forceinline__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
static __device__ __forceinline__ void bulk_g2s(unsigned int dst, const void* src, unsigned int bytes,
                                                unsigned int bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
static __device__ __forceinline__ void named_sync(unsigned int id, unsigned int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
static __device__ __forceinline__ void named_arrive(unsigned int id, unsigned int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
// the source offset of a CTA's next copy: `step` (= gridDim.x * bytes % wrap) further, wrapped without a division
static __device__ __forceinline__ long long advance(long long off, long long step, long long wrap) {
  off += step;
  return off >= wrap ? off - wrap : off;
}

// ------------------------------------------------------------------------------------------ 1. TMA + mbarrier
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_mbar_tma(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  __shared__ __align__(128) unsigned char buf[CHUNK];
  __shared__ __align__(8) unsigned long long bars[1];
  const unsigned int full = smem_u32(&bars[0]), dst = smem_u32(buf);
  if (threadIdx.x == 0) {
    mbar_init(full, 1);
    fence_mbar_init();
    fence_proxy_async();
  }
  __syncthreads();
  const long long step = ((long long)gridDim.x * CHUNK) % wrap;
  long long off = ((long long)blockIdx.x * CHUNK) % wrap;
  for (int r = 0; r < reps; ++r) {
    if (threadIdx.x == 0) {
      mbar_arrive_expect_tx(full, CHUNK);
      bulk_g2s(dst, src + off, CHUNK, full);
      off = advance(off, step, wrap);
    }
    mbar_wait(full, (unsigned int)r & 1u);
    __syncwarp();
    __syncthreads();  // every warp has seen phase r complete before thread 0 re-arms the barrier
  }
  if (off == -1) sink[0] = SINK_MAGIC;
}

extern "C" __global__ void __launch_bounds__(256, 1)
    wait_mbar_tma_nosync(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  __shared__ __align__(128) unsigned char buf[CHUNK];
  __shared__ __align__(8) unsigned long long bars[2];
  const unsigned int full = smem_u32(&bars[0]), empty = smem_u32(&bars[1]), dst = smem_u32(buf);
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const long long step = ((long long)gridDim.x * CHUNK) % wrap;
  long long off = ((long long)blockIdx.x * CHUNK) % wrap;
  if (threadIdx.x == 0) {
    mbar_init(full, 1);
    mbar_init(empty, 8);  // lane 0 of each of the 8 warps, after it has seen the copy land
    fence_mbar_init();
    fence_proxy_async();
  }
  __syncthreads();  // set-up only; the loop has no CTA barrier
  if (threadIdx.x == 0 && reps > 0) {
    mbar_arrive_expect_tx(full, CHUNK);
    bulk_g2s(dst, src + off, CHUNK, full);
    off = advance(off, step, wrap);
  }
  for (int r = 0; r < reps; ++r) {
    mbar_wait(full, (unsigned int)r & 1u);  // copy r has landed
    __syncwarp();
    if (lane == 0) mbar_arrive(empty);  // this warp is done with the buffer
    if (warp == 0) {
      if (lane == 0 && r + 1 < reps) {  // the producer: wait until every warp released the buffer, re-arm
        mbar_wait(empty, (unsigned int)r & 1u);
        mbar_arrive_expect_tx(full, CHUNK);
        bulk_g2s(dst, src + off, CHUNK, full);
        off = advance(off, step, wrap);
      }
      __syncwarp();
    }
  }
  if (off == -1) sink[0] = SINK_MAGIC;
}

// ------------------------------------------------------------------------------------------ 2. mbarrier arrive
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_mbar_arrive(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  __shared__ __align__(8) unsigned long long bars[2];
  const unsigned int bar = smem_u32(&bars[0]), ack = smem_u32(&bars[1]);
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    mbar_init(ack, 7);
    fence_mbar_init();
  }
  __syncthreads();
  if (warp == 0) {
    for (int r = 0; r < reps; ++r) {
      spin(SPIN);
      if (lane == 0) {
        if (r > 0) mbar_wait(ack, (unsigned int)(r - 1) & 1u);  // every waiter has passed phase r - 1
        mbar_arrive(bar);
      }
      __syncwarp();
    }
  } else {
    for (int r = 0; r < reps; ++r) {
      mbar_wait(bar, (unsigned int)r & 1u);
      __syncwarp();
      if (lane == 0) mbar_arrive(ack);
    }
  }
  if (wrap == -1) sink[0] = (unsigned int)src[0];
}

// ------------------------------------------------------------------------------------------ 3, 4. CTA barriers
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_syncthreads(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  const bool spinner = threadIdx.x < 32;
  for (int r = 0; r < reps; ++r) {
    if (spinner) spin(SPIN);
    __syncthreads();
  }
  if (wrap == -1) sink[0] = (unsigned int)src[0];
}

extern "C" __global__ void __launch_bounds__(256, 1)
    wait_named_barrier(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  const bool spinner = threadIdx.x < 32;
  for (int r = 0; r < reps; ++r) {
    if (spinner) spin(SPIN);
    named_sync(1, 256);
  }
  if (wrap == -1) sink[0] = (unsigned int)src[0];
}

// Warp 0 only arrives (does not wait). Each trip adds 8 warps' arrivals, so the barrier completes exactly reps
// times whatever the interleaving: the waiters cannot be left blocked at the end.
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_named_barrier_arrive(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  if (threadIdx.x < 32) {
    for (int r = 0; r < reps; ++r) {
      spin(SPIN);
      named_arrive(1, 256);
    }
  } else {
    for (int r = 0; r < reps; ++r) named_sync(1, 256);
  }
  if (wrap == -1) sink[0] = (unsigned int)src[0];
}

// ------------------------------------------------------------------------------------------ 5. wgmma
#define WG_A_BYTES (64 * 128)   // A: 64 rows x 64 bf16 (one 128B-swizzled panel)
#define WG_B_BYTES (256 * 128)  // B: 256 rows x 64 bf16

template <int SKEW>
static __device__ __forceinline__ void wgmma_loop(const unsigned char* src, long long wrap, int reps,
                                                  unsigned int* sink) {
  __shared__ __align__(1024) unsigned char wsm[WG_A_BYTES + WG_B_BYTES];
  for (int i = threadIdx.x; i < (WG_A_BYTES + WG_B_BYTES) / 4; i += blockDim.x)
    reinterpret_cast<unsigned int*>(wsm)[i] = 0u;
  fence_proxy_async();  // the zeros are visible to wgmma (async proxy)
  __syncthreads();
  if (threadIdx.x >= 128) return;  // warpgroup 1 exits
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const unsigned int a = smem_u32(wsm), b = a + WG_A_BYTES;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  for (int r = 0; r < reps; ++r) {
    if (SKEW > 0 && threadIdx.x < 32) spin(SKEW);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
      wgmma_m64n256k16(acc, wg_desc(kslice_addr(a, 64, 0, ks)), wg_desc(kslice_addr(b, 256, 0, ks)));
    wg_commit();
    wg_wait0();
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += acc[i];
  if (s == 1234.5f || wrap == -1) sink[threadIdx.x] = (unsigned int)s + (unsigned int)src[0];
#else
  // built without the sm_90a features (nvcc -arch=sm_90a also emits compute_90 PTX, which has no wgmma): no
  // wgmma to wait on; flag it (run_stallmap.py checks sink[SINK_FLAG]) instead of measuring an empty loop
  if (threadIdx.x == 0) sink[SINK_FLAG] = SINK_NO_SM90A;
  (void)reps;
#endif
}
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_wgmma(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  wgmma_loop<0>(src, wrap, reps, sink);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_wgmma_skew(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  wgmma_loop<SPIN_SKEW>(src, wrap, reps, sink);
}

// ------------------------------------------------------------------------------------------ 6. cp.async
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_cp_async(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  __shared__ __align__(128) unsigned char buf[CP_BYTES];
  const unsigned int dst = smem_u32(buf + 16 * threadIdx.x);
  const long long step = ((long long)gridDim.x * CP_BYTES) % wrap;
  long long off = ((long long)blockIdx.x * CP_BYTES) % wrap;
  for (int r = 0; r < reps; ++r) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + off + 16 * threadIdx.x)
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncwarp();
    off = advance(off, step, wrap);
  }
  if (off == -1) sink[0] = buf[threadIdx.x];
}

// ------------------------------------------------------------------------------------------ 7. global loads
// src's line i holds (at its first 8 bytes) the byte offset of the next line of a full-period LCG permutation of
// the lines (run_stallmap.py fills it); warp w starts at a hashed line. All lanes load the same address (one
// request per warp), so the warp waits on one dependent load after another.
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_global_load(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  const unsigned long long lines = (unsigned long long)wrap / 128ull;  // a power of two
  const unsigned int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  unsigned long long p = ((unsigned long long)(w * 2654435761u) & (lines - 1ull)) * 128ull;
  for (int r = 0; r < reps; ++r) {
    unsigned long long nxt;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(nxt) : "l"(src + p) : "memory");
    p = nxt;
  }
  if (p == ~0ull) sink[0] = (unsigned int)p;
}

// ------------------------------------------------------------------------------------------ 8. proxy fence
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_fence_proxy(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  __shared__ __align__(16) unsigned int s[256];
  const unsigned int a = smem_u32(&s[threadIdx.x]);
  for (int r = 0; r < reps; ++r) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"((unsigned int)r) : "memory");
    fence_proxy_async();
  }
  __syncthreads();
  if (wrap == -1) sink[0] = s[(threadIdx.x + 1) & 255] + (unsigned int)src[0];
}

// ------------------------------------------------------------------------------------------ control
extern "C" __global__ void __launch_bounds__(256, 1)
    wait_spin_only(const unsigned char* __restrict__ src, long long wrap, int reps, unsigned int* sink) {
  if (threadIdx.x >= 32) return;
  for (int r = 0; r < reps; ++r) {
    spin(SPIN);
    __syncwarp();
  }
  if (wrap == -1) sink[0] = (unsigned int)src[0];
}
