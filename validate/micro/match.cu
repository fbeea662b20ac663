// Warp match (__match_any_sync: MATCH.ANY) on the H100 against shuffles (SHFL.BFLY), for the warp-aggregated
// histogram (validate/kernels/histogram_aggregated.cu): validate/micro/run_match.py, NVRTC -std=c++17.
//
// One CTA per SM of `blockDim.x` threads (1, 4, 16 or 32 warps). Lane l of every warp holds the value l % k (k
// distinct values in the warp). Each thread runs `iters` x UNROLL operations in CHAINS independent chains, each
// operation's input depending on the previous result of its chain through `noise` (0 at run time, unknown to the
// compiler): warp_match_* MATCH.ANY, warp_shfl_* SHFL.BFLY, warp_mix_* one MATCH.ANY and one SHFL.BFLY alternately (do they share a
// pipe?). CHAINS = 1 gives the dependent latency, CHAINS = 8 the issue rate. Lane 0 of each warp records clock64
// before and after its loop (closed by __syncthreads) and its SM; every thread adds its chains into out[tid].
#define UNROLL 16

template <int OP, int CHAINS>
static __device__ __forceinline__ void body(int k, int iters, unsigned noise, long long* rec,
                                            unsigned* out) {
  const int lane = threadIdx.x & 31;
  unsigned v[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) v[c] = (unsigned)(lane % k);
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) {
        unsigned r;
        if (OP == 0 || (OP == 2 && (u & 1) == 0)) r = __match_any_sync(0xffffffffu, v[c]);
        else r = __shfl_xor_sync(0xffffffffu, v[c], 1);
        v[c] ^= r & noise;
      }
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  if (lane == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    rec[3 * w] = t0;
    rec[3 * w + 1] = t1;
    rec[3 * w + 2] = smid;
  }
  unsigned s = 0;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += v[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// one kernel per operation and chain count: warp_<op>_c<chains>
#define WARP_OP_KERNEL(NAME, OP, CHAINS)                                                                        \
  extern "C" __global__ void NAME(int k, int iters, unsigned noise, long long* rec, unsigned* out) {             \
    body<OP, CHAINS>(k, iters, noise, rec, out);                                                                \
  }

WARP_OP_KERNEL(warp_match_c1, 0, 1)
WARP_OP_KERNEL(warp_match_c8, 0, 8)
WARP_OP_KERNEL(warp_shfl_c1, 1, 1)
WARP_OP_KERNEL(warp_shfl_c8, 1, 8)
WARP_OP_KERNEL(warp_mix_c1, 2, 1)
WARP_OP_KERNEL(warp_mix_c8, 2, 8)
