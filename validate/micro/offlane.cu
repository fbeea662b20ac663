// What does a shared-memory instruction whose lanes are all predicated off cost the L1TEX data pipe?
// (validate/micro/run_offlane.py) ncu counts one shared wavefront for each (l1tex__data_pipe_lsu_wavefronts_mem_shared,
// outside its op_ld / op_st counts): the reductions' and block_scan's extra wavefronts match their all-off
// instructions (validate/measurements/h100/diagnostics/sharedpipe-2026-12-07-ncu-*.csv). Here one CTA per SM runs
// `warps` warps; each warp's loop issues 8 independent predicated conflict-free shared loads (or 4 stores), the
// predicate lane < lim (per lane, so ptxas keeps @P on the LDS / STS rather than a branch around them: checked in the
// SASS): on for the first `on_warps` warps (lim 32), off for every lane of the others (lim 0); warps from
// `active_warps` on skip the loop. Each warp records its own clock64 cycles over its loop: the pipe's throughput and
// the on warps' slowdown beside off ones say whether an all-off instruction takes a pipe cycle.
extern "C" __global__ void offlane(int on_warps, int active_warps, int iters, int store, float* sink, long long* out) {
  __shared__ float s[8 * 32 + 32];
  for (int i = threadIdx.x; i < 8 * 32 + 32; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  volatile float* vs = s;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int lim = warp < on_warps ? 32 : 0;
  long long t0 = clock64();
  if (warp < active_warps) {
    if (store) {
#pragma unroll 1
      for (int i = 0; i < iters; ++i) {
        const bool p = lane < lim;
        const float v = (float)i;
        if (p) { vs[lane] = v; vs[lane + 32] = v; vs[lane + 64] = v; vs[lane + 96] = v; }
      }
    } else {
#pragma unroll 1
      for (int i = 0; i < iters; ++i) {
        const bool p = lane < lim;
        float x0 = 0.f, x1 = 0.f, x2 = 0.f, x3 = 0.f, x4 = 0.f, x5 = 0.f, x6 = 0.f, x7 = 0.f;
        if (p) { x0 = vs[lane]; x1 = vs[lane + 32]; x2 = vs[lane + 64]; x3 = vs[lane + 96];
                 x4 = vs[lane + 128]; x5 = vs[lane + 160]; x6 = vs[lane + 192]; x7 = vs[lane + 224]; }
        asm volatile("" :: "f"(x0), "f"(x1), "f"(x2), "f"(x3), "f"(x4), "f"(x5), "f"(x6), "f"(x7));  // used, no math
      }
    }
  }
  long long t1 = clock64();
  if (lane == 0) out[blockIdx.x * blockDim.x / 32 + warp] = t1 - t0;
}
