// Atomics on the H100 (validate/micro/run_atomics.py, NVRTC -std=c++17): the rate of shared-memory atomics by address
// pattern, against plain shared stores, and of global reductions (atomicAdd whose result is unused: RED) by pattern.
//
// Shared (one CTA per SM, `blockDim.x` threads = 1, 4 or 32 warps): lane l of every warp works on word
// (l % k) * stride of a 1024-word shared array: k distinct addresses per warp instruction, in k different banks
// (stride 1), in one bank (stride 32), or all 32 lanes in 32 banks and 32 rows (k = 32, stride 33). Each thread runs
// `iters` x 16 of one operation (unrolled): smem_atom_inc, atomicAdd(p, 1u) (nvcc: ATOMS.POPC.INC, the form a
// histogram's `atomicAdd(&h[v], 1)` compiles to); smem_atom_add, atomicAdd(p, inc) with inc a kernel argument
// (ATOMS.ADD, the form of a warp-aggregated histogram); smem_sts, a volatile store (STS). After a __syncthreads, the
// lane-0 thread of each warp records clock64 before and after its loop (the loop ends with a __syncthreads, so the
// end is the CTA's) and its SM, rec[3 * (blockIdx.x * warps + warp) + 0..2]; thread 0 then writes the sum of the
// array to out[blockIdx.x] (the atomics' total, for the check).
//
// Global (red_pattern, any grid): each thread runs `iters` x 8 atomicAdd(&buf[a], inc) (REDG.E.ADD) where a is
// mode 0: 0 for every thread of the grid; mode 1: 32 * (global warp index), a 128-B line per warp, every lane on its
// first word; mode 2: the global thread index (each warp 32 consecutive words, coalesced); mode 3: a hash of
// (thread, op) masked with `mask` (a power of two minus one, in words): random words over mask + 1 words.
#define SMEM_WORDS 1024
#define SMEM_UNROLL 16
#define RED_UNROLL 8

static __device__ __forceinline__ void smem_record(long long t0, long long t1, long long* rec) {
  if ((threadIdx.x & 31) == 0) {
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    rec[3 * w] = t0;
    rec[3 * w + 1] = t1;
    rec[3 * w + 2] = smid;
  }
}

static __device__ __forceinline__ void smem_total(const unsigned int* s, unsigned int* out) {
  if (threadIdx.x == 0) {
    unsigned int t = 0;
    for (int i = 0; i < SMEM_WORDS; ++i) t += s[i];
    out[blockIdx.x] = t;
  }
}

extern "C" __global__ void smem_atom_inc(int k, int stride, int iters, unsigned int inc, long long* rec,
                                         unsigned int* out) {
  __shared__ unsigned int s[SMEM_WORDS];
  for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) s[i] = 0;
  unsigned int* p = &s[((threadIdx.x & 31) % k) * stride];
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < SMEM_UNROLL; ++u) atomicAdd(p, 1u);
  }
  __syncthreads();
  const long long t1 = clock64();
  smem_record(t0, t1, rec);
  smem_total(s, out);
}

extern "C" __global__ void smem_atom_add(int k, int stride, int iters, unsigned int inc, long long* rec,
                                         unsigned int* out) {
  __shared__ unsigned int s[SMEM_WORDS];
  for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) s[i] = 0;
  unsigned int* p = &s[((threadIdx.x & 31) % k) * stride];
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < SMEM_UNROLL; ++u) atomicAdd(p, inc);
  }
  __syncthreads();
  const long long t1 = clock64();
  smem_record(t0, t1, rec);
  smem_total(s, out);
}

extern "C" __global__ void smem_sts(int k, int stride, int iters, unsigned int inc, long long* rec,
                                    unsigned int* out) {
  __shared__ unsigned int s[SMEM_WORDS];
  for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) s[i] = 0;
  volatile unsigned int* p = &s[((threadIdx.x & 31) % k) * stride];
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < SMEM_UNROLL; ++u) *p = inc + u;
  }
  __syncthreads();
  const long long t1 = clock64();
  smem_record(t0, t1, rec);
  smem_total(s, out);
}

static __device__ __forceinline__ unsigned int mix(unsigned int x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

extern "C" __global__ void red_pattern(unsigned int* __restrict__ buf, int mode, int iters, unsigned int mask,
                                       unsigned int inc) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (mode == 3) {
    const unsigned int seed = tid * (unsigned int)(iters * RED_UNROLL);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int u = 0; u < RED_UNROLL; ++u) atomicAdd(&buf[mix(seed + it * RED_UNROLL + u) & mask], inc);
    }
    return;
  }
  const unsigned int a = mode == 0 ? 0u : mode == 1 ? (tid >> 5) * 32u : tid;
  unsigned int* p = &buf[a];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < RED_UNROLL; ++u) atomicAdd(p, inc);
  }
}
