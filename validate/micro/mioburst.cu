// How many one-wavefront shared loads does a sub-partition's MIO queue hold? (validate/micro/run_mioburst.py)
// One CTA per SM, `warps` warps (warp w on sub-partition w % 4). Each warp reads clock64, issues 32 independent
// loads (floats `stride_words` apart, each its own destination register, the predicate lane < lim: on for
// every lane, or off for every lane with lim 0), reads clock64 again when the last has issued (a clock read waits for
// no load), then adds the 32 values and reads clock64 a third time (the data is back). The issue time of the burst
// shows where issue waits for room in the queue in front of the L1TEX pipe (1 wavefront a cycle, SM-wide): with a
// queue of D requests a sub-partition, a warp alone on its sub-partition issues D loads at once and the rest at the
// pipe's pace; with several, they share the D places. `stride_words` between lanes: 1 conflict-free (one wavefront a
// load), 8 an 8-way conflict (8 wavefronts), as validate/micro/queues.cu measured the queue with.
#define NB 32
extern "C" __global__ void mioburst(int warps_active, int lim_on, int stride_words, float* sink, long long* out) {
  __shared__ float s[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp >= warps_active) return;
  const unsigned int base = (unsigned int)__cvta_generic_to_shared(&s[(lane * stride_words) % 1024]);
  float v[NB];
#pragma unroll
  for (int i = 0; i < NB; ++i) v[i] = 0.0f;
  long long t0, t1, t2;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
#pragma unroll
  for (int i = 0; i < NB; ++i)
    asm volatile("{ .reg .pred p; setp.lt.s32 p, %1, %2; @p ld.shared.f32 %0, [%3]; }"
                 : "+f"(v[i]) : "r"(lane), "r"(lim_on), "r"(base + 128u * i) : "memory");
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < NB; ++i) acc += v[i];
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t2) : "f"(acc) : "memory");
  if (lane == 0) {
    out[2 * (blockIdx.x * 32 + warp)] = t1 - t0;
    out[2 * (blockIdx.x * 32 + warp) + 1] = t2 - t0;
  }
  if (acc == 1234.5f) sink[0] = acc;
}
