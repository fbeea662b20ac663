// HBM read bandwidth against the contiguous span read at each random position (validate/micro/run_hbm_span.py).
// Every warp issues `reps` rounds of 16 independent warp-wide loads (the same loads in flight whatever the span). A
// load reads one 128-B line (lanes on consecutive floats) when span >= 128: the span's lines one after another, then a
// new random position (a multiple of span bytes); when span is 64 or 32, each group of span/4 lanes reads its own
// random position, so one load covers 128/span of them. Positions are fresh ones of a buffer far larger than the L2
// (its size over span a power of two); a 32-bit hash picks them, cheap beside the loads.
static __device__ __forceinline__ unsigned int mix32(unsigned int x) {  // cheap: the loads, not this, must bound
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

extern "C" __global__ void hbm_span(const float* __restrict__ buf, unsigned long long nbytes, int span, int reps,
                                    unsigned long long seed, float* __restrict__ sink) {
  const unsigned int lane = threadIdx.x & 31;
  const unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5;
  const unsigned int mask = (unsigned int)(nbytes / (unsigned long long)span) - 1u;  // positions: a power of two
  const int lines = span >= 128 ? span / 128 : 1;             // loads per position, a power of two
  const int shift = __ffs(lines) - 1;
  const int group = span >= 128 ? 0 : (int)(lane / (span / 4));  // which position of the load this lane reads
  const int within = span >= 128 ? (int)lane * 4 : (int)(lane % (span / 4)) * 4;
  float s = 0.0f;
  for (int j = 0; j < reps; ++j) {
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const unsigned int load = (unsigned int)j * 16u + k;  // the warp's load number
      const unsigned int p = load >> shift, line = load & (unsigned int)(lines - 1);
      const unsigned long long pos = mix32((unsigned int)seed ^ ((unsigned int)warp * 0x9E3779B9u + p * 64u + group)) & mask;
      s += *reinterpret_cast<const float*>(reinterpret_cast<const char*>(buf) + pos * span + line * 128 + within);
    }
  }
  if (s == -1.0f) sink[0] = s;
}

// hbm_gap (run_hbm_span.py --gaps): 64-B blocks `gap` bytes apart, in order. Each warp walks its own contiguous
// region of the buffer; a load covers two blocks (each half-warp one, the second `gap` bytes after the first), 16
// loads in flight per warp. Where the blocks share DRAM rows the reads run at the streaming rate; where each opens a
// row of its own they run at the random-block rate.
extern "C" __global__ void hbm_gap(const float* __restrict__ buf, unsigned long long nbytes, int gap, int reps,
                                   float* __restrict__ sink) {
  const unsigned int lane = threadIdx.x & 31;
  const unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5;
  const unsigned long long per_warp = (unsigned long long)reps * 16 * 2 * gap;  // bytes of buffer a warp walks
  const unsigned long long start = (warp * per_warp) % (nbytes - per_warp);
  const char* base = reinterpret_cast<const char*>(buf) + start + (lane >> 4) * (unsigned long long)gap + (lane & 15) * 4;
  float s = 0.0f;
  for (int j = 0; j < reps; ++j) {
#pragma unroll
    for (int k = 0; k < 16; ++k) s += *reinterpret_cast<const float*>(base + ((unsigned long long)j * 16 + k) * 2 * gap);
  }
  if (s == -1.0f) sink[0] = s;
}
