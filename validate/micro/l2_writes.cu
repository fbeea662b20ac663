// How ncu's L2 counts stores (validate/micro/run_l2_writes.py): lookups per stored sector, their hits, and what
// reaches DRAM, for stores of 1 to 32 sectors per warp request into a buffer that fits the L2 or does not.
// l2w_store: thread i of the grid stores one float at out[(i * stride) % n] (stride 1: 4 sectors of one line per
// warp; stride 8: one sector per lane, 32 per request). l2w_copy: out[i] = in[i] (the STREAM copy's pattern).
extern "C" __global__ void l2w_store(float* __restrict__ out, long long n, int stride) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  out[(i * stride) % n] = 1.0f;
}

extern "C" __global__ void l2w_copy(const float* __restrict__ in, float* __restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// l2w_mix (validate/micro/run_l2_writeback.py): thread i stores out[i], then its warp reads `ratio` whole lines of
// `in` (each lane a float of each line) from a region of `in_n` floats, wrapping: with in_n far larger than the reads
// every line read is new (a miss), with a small in_n the same lines come back (hits). What the L2 allocates per
// byte stored is 1 + ratio x (copies per line read) when the reads miss.
extern "C" __global__ void l2w_mix(float* __restrict__ out, const float* __restrict__ in, long long n,
                                   long long in_n, int ratio, float* __restrict__ sink) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = 1.0f;
  long long base = (i / 32) * 32 * ratio + (i % 32);
  float s = 0.0f;
  for (int j = 0; j < ratio; ++j) s += in[(base + 32LL * j) % in_n];
  if (s == -1.0f) sink[0] = s;
}

// l2w_partial (validate/micro/run_l2_writeback.py --partial): a reduction's pattern. Each CTA of 256 threads reads
// `per` floats per thread of `in` (coalesced, its own slice: a stream of ctas x 256 x per floats), sums them over
// the CTA, and thread 0 stores `width` floats at out[blockIdx.x * pitch]: width 1, pitch 1 is one 4-byte partial sum
// per CTA, eight CTAs to a sector; pitch 8 gives each CTA a sector of its own (4 bytes of it written); width 8 a whole
// sector; width 0 stores nothing (the stream alone). What reaches DRAM says how often a partly written sector leaves
// the L2.
extern "C" __global__ void l2w_partial(const float* __restrict__ in, float* __restrict__ out, int per, int width,
                                       int pitch) {
  __shared__ float part[8];
  const long long base = (long long)blockIdx.x * 256 * per;
  float s = 0.0f;
  for (int j = 0; j < per; ++j) s += in[base + (long long)j * 256 + threadIdx.x];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < width) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) t += part[w];
    out[(long long)blockIdx.x * pitch + threadIdx.x] = t + threadIdx.x;
  }
}
