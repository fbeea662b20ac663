// The L1TEX pipe's rate for global loads that mostly hit: does a request that misses, or one whose lanes all read
// one word (a broadcast, as sgemm_coalesced's A loads), take more of the pipe than a hit of one full line?
// run_l1_mix.py compiles it once per case (-D MISS=, -D MODE=). Each warp issues ITERS requests of 32 lanes in
// groups of 32 (independent, summed): MISS of each group (evenly spaced; 0 to 32) read a line of `cold` no other
// request reads (an L1 miss, from the L2 or HBM), the others a line of `hot` (32 lines a CTA, L1-resident after the
// first touch). MODE 0: every request a full line (lane l reads word l); 1: one word for all lanes (a broadcast);
// 2: the two alternate (sgemm_coalesced: A broadcast, B line).
// SPAN (run_l1_mix.py's span rows): a missing request's lanes spread over SPAN lines of `cold` (lane l reads word l / SPAN
// of line l % SPAN: 32 / SPAN words a line), MODE 0 only, MISS * SPAN <= 32. Does a request that misses take the pipe
// once more, or once more for each line it misses?
// MODE 3: no request misses alone; every warp of a CTA reads the same 32 lines in a
// group, lines of `cold` nothing read before (the first warp's request misses, the others find the line pending or
// filled: sgemm_coalesced's B loads). Does a hit on a line still on its way cost more than a hit?
// MODE 4 (run_l1_mix.py's share rows): as MODE 3, but SHARE warps of a CTA share each line (warp w reads the lines of
// subset w / SHARE) and the lines come from a 128-group window of `cold` every CTA of the chip walks: L2-resident,
// never L1-resident when read again. How does the cost grow with the warps that find a line on its way?
// MODE 5 (run_l1_mix.py's reuse rows; not measured yet): a warp's own new lines, each read by REUSE of its requests in a row (the first misses, the
// others find the line on its way: sgemm_coalesced's A loads); MODE 3's waiters, but one warp's.
#ifndef REUSE
#define REUSE 8
#endif
#ifndef SPAN
#define SPAN 1
#endif
#ifndef SHARE
#define SHARE 32
#endif
#define WINDOW 128
#ifndef MISS
#define MISS 0
#endif
#ifndef MODE
#define MODE 0
#endif
#define GROUP 32
extern "C" __global__ void l1mix(const float* __restrict__ hot, const float* __restrict__ cold, int iters,
                                 int zero, float* sink) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int per = MISS > 0 ? MISS : 1, gap = GROUP / per;
  const float* __restrict__ h = hot + (size_t)blockIdx.x * 32 * 32;  // every warp of the CTA reads the same 32 lines
  const float* c = cold + ((size_t)blockIdx.x * warps + warp) * (size_t)(iters / GROUP) * per * 32 * SPAN;
  const float* hl = h + lane;
  float acc = 0.f;
  for (int i = 0; i < iters / GROUP; ++i) {
    const float* cl = c + (size_t)i * per * 32 * SPAN + (SPAN > 1 ? (lane % SPAN) * 32 + lane / SPAN : lane);
    const float* fl = MODE == 3 ? cold + ((size_t)blockIdx.x * (iters / GROUP) + i) * GROUP * 32 + lane
                                : cold + ((size_t)(warp / SHARE) * WINDOW + i % WINDOW) * GROUP * 32 + lane;
    hl += zero;  // zero at run time: the hot loads stay in the loop (the compiler cannot hoist them)
    h += zero;
#pragma unroll
    for (int u = 0; u < GROUP; ++u) {
      const bool bcast = MODE == 1 || (MODE == 2 && (u & 1) == 0);
      if (MODE == 5) {
        acc += cold[(((size_t)blockIdx.x * warps + warp) * (iters / GROUP) + i) * (GROUP / REUSE) * 32 +
                    (u / REUSE) * 32 + lane];
      } else if (MODE >= 3) {
        acc += fl[u * 32];
      } else if (MISS > 0 && u % gap == 0) {
        acc += bcast ? cl[(u / gap) * 32 - lane] : cl[(u / gap) * 32 * SPAN];
      } else {
        acc += bcast ? h[u * 32] : hl[u * 32];
      }
    }
  }
  sink[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
