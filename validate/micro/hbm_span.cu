// HBM read bandwidth against the contiguous span read at each random position (validate/micro/run_hbm_span.py).
// Every warp reads `reps` positions of a buffer of `nbytes`, each at a random multiple of `span` bytes, and there
// `span` contiguous bytes: whole 128-B lines (lanes on consecutive floats) when span >= 128; when span is 64 or 32, each
// group of span/4 lanes reads its own random position, so one request covers 128/span of them. The loads of a warp
// are independent (summed), so many are in flight. Every position is a fresh one of a buffer far larger than the L2.
static __device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

extern "C" __global__ void hbm_span(const float* __restrict__ buf, unsigned long long nbytes, int span, int reps,
                                    unsigned long long seed, float* __restrict__ sink) {
  const unsigned int lane = threadIdx.x & 31;
  const unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5;
  const unsigned long long positions = nbytes / (unsigned long long)span;
  const int group = span >= 128 ? 0 : (int)(lane / (span / 4));  // which position of the request this lane reads
  float s = 0.0f;
#pragma unroll 4
  for (int j = 0; j < reps; ++j) {
    const unsigned long long pos = mix64(seed ^ (warp * 1315423911ULL + (unsigned long long)j * 64 + group)) % positions;
    const char* base = reinterpret_cast<const char*>(buf) + pos * span;
    if (span >= 128) {
      for (int l = 0; l < span / 128; ++l) s += *reinterpret_cast<const float*>(base + l * 128 + lane * 4);
    } else {
      s += *reinterpret_cast<const float*>(base + (lane % (span / 4)) * 4);
    }
  }
  if (s == -1.0f) sink[0] = s;
}
