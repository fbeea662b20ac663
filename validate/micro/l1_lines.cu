// Does the L1 hold what a load touched by the 32-B sector or by the 128-B line? run_l1_lines.py compiles it per
// SECTORS. One CTA of 1024 threads per SM walks its own window of `lines` 128-B lines `passes` times; warp w takes
// the groups of 32 lines w, w + 32, ... of each pass. SECTORS 1: a request's lane l reads word 0 of line l of the
// group (32 lines, one sector of each); SECTORS 4: 32 requests a group, request u reads all of line u (lane l word l).
// The window's sectors touched are lines x 32 B (SECTORS 1) or lines x 128 B (4): if the L1 allocates by the line,
// SECTORS 1 stops hitting where lines x 128 B passes its capacity, as SECTORS 4 does; by the sector, only at four
// times that. Ideal hit rate with `passes` passes: (passes - 1) / passes of the sectors.
#ifndef SECTORS
#define SECTORS 1
#endif
extern "C" __global__ void l1_lines(const float* __restrict__ data, int lines, int passes, int zero, float* sink) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const float* w = data + (size_t)blockIdx.x * lines * 32;
  float acc = 0.f;
  for (int p = 0; p < passes; ++p) {
    w += zero;  // zero at run time: the loads stay in the pass loop
    for (int base = warp * 32; base < lines; base += warps * 32) {
#if SECTORS == 1
      acc += w[(size_t)(base + lane) * 32];
#else
#pragma unroll 8
      for (int u = 0; u < 32; ++u) acc += w[(size_t)(base + u) * 32 + lane];
#endif
    }
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
