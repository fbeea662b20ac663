// Memory-system and launch micro-benchmarks for the chip-level model (validate/micro/run_memsys.py).
// Every kernel is plain CUDA C++ (NVRTC through CuPy); timings come from clock64 inside and CUDA events outside.
#include <cuda_runtime.h>

extern "C" {

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// One record per CTA: SM id, clock64 at entry and exit (thread 0), after `spin` cycles of work.
// Launched with a dynamic shared-memory request that allows one CTA per SM (the launch reserves it), consecutive CTAs on one SM show the cycles
// from one CTA's exit to the next one's entry: the CTA launch cost after a slot frees.
__global__ void cta_stamp(unsigned long long* rec, long long spin) {
  long long t0 = clock64();
  if (spin > 0) {
    while (clock64() - t0 < spin) {}
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long t1 = clock64();
    unsigned b = blockIdx.x;
    rec[3 * b + 0] = smid();
    rec[3 * b + 1] = (unsigned long long)t0;
    rec[3 * b + 2] = (unsigned long long)t1;
  }
}

// Streams (16-B accesses, grid-stride). read: sum into one word per thread (never zero for random data);
// write: store a constant; copy: dst = src.
__global__ void hbm_read(const float4* __restrict__ a, size_t n, float* out) {
  float s = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(a + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1234.5f) out[0] = s;
}

__global__ void hbm_write(float4* __restrict__ a, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = make_float4(v, v, v, v);
}

__global__ void hbm_copy(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = __ldcg(a + i);
}

// Stores of 4 B per lane touching `sectors` 32-B sectors per warp instruction (1..32): the warp's lanes are
// split into `sectors` groups of 32/sectors consecutive words, group g in its own sector `g * 4` sectors apart
// (so no two groups share a line). Every warp instruction writes a fresh region of the buffer, wrapping around
// its end (with a buffer smaller than the L2, every store hits L2 and no DRAM traffic is involved).
__global__ void store_sectors(float* __restrict__ buf, size_t words, int sectors, int reps) {
  const int lane = threadIdx.x & 31;
  const int per = 32 / sectors;
  const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
  const size_t warps = ((size_t)gridDim.x * blockDim.x) >> 5;
  const size_t span = (size_t)sectors * 4 * 8;  // words one warp instruction spans (4 sectors of 8 words each)
  for (int r = 0; r < reps; ++r) {
    size_t base = ((size_t)r * warps + warp) * span;
    size_t idx = (base + (size_t)(lane / per) * 32 + (lane % per)) % words;  // wraps: a small buffer stays in L2
    buf[idx] = (float)r;
  }
}

// `n_active` CTAs of 1024 threads, one per SM (the dynamic shared-memory request allows one), each reading its
// own `bytes_per_cta` with 16-B `ld.global.cg` loads, 4 independent loads in flight per thread, `passes` times.
// `shared_region`: every CTA reads the same region (L2-resident after the first pass) instead of its own.
__global__ void sm_pull(const float4* __restrict__ a, size_t vec_per_cta, int passes, int shared_region,
                        unsigned long long* rec, float* out) {
  const float4* base = a + (shared_region ? 0 : blockIdx.x * vec_per_cta);
  float s = 0.f;
  __syncthreads();
  long long t0 = clock64();
  for (int p = 0; p < passes; ++p) {
    for (size_t i = threadIdx.x; i + 3 * blockDim.x < vec_per_cta; i += 4 * (size_t)blockDim.x) {
      float4 v0 = __ldcg(base + i), v1 = __ldcg(base + i + blockDim.x);
      float4 v2 = __ldcg(base + i + 2 * blockDim.x), v3 = __ldcg(base + i + 3 * blockDim.x);
      s += v0.x + v1.y + v2.z + v3.w;
    }
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) {
    rec[2 * blockIdx.x] = (unsigned long long)(t1 - t0);
    rec[2 * blockIdx.x + 1] = smid();
  }
  if (s == 1234.5f) out[0] = s;
}

// shfl.sync: a dependent chain (latency) and 8 independent chains per warp in 32 warps (throughput).
__global__ void shfl_chain(int iters, unsigned long long* rec, int* out) {
  int v = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) v = __shfl_xor_sync(0xffffffffu, v, 1);
  long long t1 = clock64();
  if (threadIdx.x == 0) rec[0] = (unsigned long long)(t1 - t0);
  if (v == -7) out[0] = v;
}

__global__ void shfl_throughput(int iters, unsigned long long* rec, int* out) {
  int v0 = threadIdx.x, v1 = v0 + 1, v2 = v0 + 2, v3 = v0 + 3, v4 = v0 + 4, v5 = v0 + 5, v6 = v0 + 6, v7 = v0 + 7;
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    v0 = __shfl_xor_sync(0xffffffffu, v0, 1); v1 = __shfl_xor_sync(0xffffffffu, v1, 2);
    v2 = __shfl_xor_sync(0xffffffffu, v2, 4); v3 = __shfl_xor_sync(0xffffffffu, v3, 8);
    v4 = __shfl_xor_sync(0xffffffffu, v4, 16); v5 = __shfl_xor_sync(0xffffffffu, v5, 1);
    v6 = __shfl_xor_sync(0xffffffffu, v6, 2); v7 = __shfl_xor_sync(0xffffffffu, v7, 4);
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) rec[blockIdx.x] = (unsigned long long)(t1 - t0);
  int s = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
  if (s == -7) out[0] = s;
}

}  // extern "C"
