// Which warps of a shared-memory tree reduction finish each level first, and how long a level takes
// (validate/micro/run_reduce_levels.py). The two Harris reductions of validate/kernels/ (interleaved, sequential
// addressing), each warp's lane 0 reading the SM clock (clock(), one counter an SM) after its level's
// store (the store waits on the load it adds) and after the level's barrier; the clocks stay in registers and are
// written once, at the end. What the model books as one pipe block per operation, the H100 shows warp by warp.
#define LEVELS 8
template <bool INTERLEAVED>
__device__ __forceinline__ void body(const float* __restrict__ in, float* __restrict__ out, unsigned* __restrict__ clk,
                                     unsigned* __restrict__ smid_out) {
  __shared__ float sdata[256];
  unsigned tid = threadIdx.x;
  unsigned pre[LEVELS], post[LEVELS], t0;
  sdata[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
  t0 = clock();
#pragma unroll
  for (int l = 0; l < LEVELS; ++l) {
    if (INTERLEAVED) {
      unsigned s = 1u << l;
      unsigned index = 2 * s * tid;
      if (index < 256) sdata[index] += sdata[index + s];
    } else {
      unsigned s = 128u >> l;
      if (tid < s) sdata[tid] += sdata[tid + s];
    }
    __syncwarp();
    pre[l] = clock();
    __syncthreads();
    post[l] = clock();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
  if ((tid & 31) == 0) {
    unsigned w = tid >> 5;
    unsigned* c = clk + ((size_t)blockIdx.x * 8 + w) * (2 * LEVELS + 1);
    c[0] = t0;
#pragma unroll
    for (int l = 0; l < LEVELS; ++l) { c[1 + 2 * l] = pre[l]; c[2 + 2 * l] = post[l]; }
    if (w == 0) { unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm)); smid_out[blockIdx.x] = sm; }
  }
}
extern "C" __global__ void reduce_interleaved_clk(const float* __restrict__ in, float* __restrict__ out,
                                                  unsigned* __restrict__ clk, unsigned* __restrict__ smid) {
  body<true>(in, out, clk, smid);
}
extern "C" __global__ void reduce_sequential_clk(const float* __restrict__ in, float* __restrict__ out,
                                                 unsigned* __restrict__ clk, unsigned* __restrict__ smid) {
  body<false>(in, out, clk, smid);
}
