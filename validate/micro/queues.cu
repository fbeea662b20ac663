// How deep are the queues in front of the L1TEX pipe? One CTA on one SM; WARPS warps (one per SM sub-partition)
// each issue NLD independent loads of the same 32 lane addresses back to back, reading %clock after each one. The
// issue of load i is held while the queue in front of the L1TEX pipe is full, so the clock after it shows where
// issue starts to wait: the first loads issue a few cycles apart, then every load waits for the pipe to finish
// one request (its wavefronts or lines). Global loads (LG queue) hit in L1 (warmed first); shared loads (MIO queue)
// use STRIDE words between lanes: 1 -> one wavefront or line per request, 8 -> 8 (shared: 8-way conflict;
// global: 8 lines), 32 -> 32. Every load adds its own offset read from `zeros` (all 0 at run time) so that ptxas
// cannot merge the identical loads into one.
#ifndef NLD
#define NLD 40
#endif

extern "C" __global__ void __launch_bounds__(128, 1)
queue_burst(const float* __restrict__ buf, const int* __restrict__ zeros, int stride_words, int warps_active,
            int shared_space, unsigned* out, float* sink) {
  __shared__ float smem[32 * 32 + 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = threadIdx.x; i < 32 * 32 + 32; i += blockDim.x) smem[i] = buf[i];
  __syncthreads();
  if (warp >= warps_active) return;
  const int word = (lane * stride_words) % (32 * 32);
  const float* g = buf + word;
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem + word);
  float warm;
  if (shared_space) asm volatile("ld.shared.f32 %0, [%1];" : "=f"(warm) : "r"(s));
  else asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(warm) : "l"(g));
  unsigned dep;
  asm volatile("mov.b32 %0, %1;" : "=r"(dep) : "f"(warm));  // waits for the warm-up load: L1 holds the lines
  int o[NLD];
#pragma unroll
  for (int i = 0; i < NLD; ++i) o[i] = zeros[i];
  float v[NLD];
  unsigned t[NLD + 1];
  asm volatile("mov.u32 %0, %%clock;" : "=r"(t[0]) : "r"(dep), "r"(o[NLD - 1]));
  if (shared_space) {
#pragma unroll
    for (int i = 0; i < NLD; ++i) {
      asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v[i]) : "r"(s + 4u * o[i]));
      asm volatile("mov.u32 %0, %%clock;" : "=r"(t[i + 1]));
    }
  } else {
#pragma unroll
    for (int i = 0; i < NLD; ++i) {
      asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(v[i]) : "l"(g + o[i]));
      asm volatile("mov.u32 %0, %%clock;" : "=r"(t[i + 1]));
    }
  }
  float acc = warm;
#pragma unroll
  for (int i = 0; i < NLD; ++i) acc += v[i];
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < NLD; ++i) out[warp * NLD + i] = t[i + 1] - t[i];
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;
}

// A reduction step in a loop: two shared loads, an add, a shared store and __syncthreads, as every stride of a
// shared-memory tree reduction does (the race between steps does not matter for timing). STRIDE words between
// the two loads' lanes (1: conflict-free; 2, 8, 32: 2-, 8-, 32-way conflicts on the second load). Thread 0 of
// each CTA writes its cycles per iteration.
extern "C" __global__ void smem_step(int iters, int stride_words, float* sink, float* per_iter) {
  __shared__ float s[256 * 16];
  const int tid = threadIdx.x;
  for (int i = tid; i < 256 * 16; i += blockDim.x) s[i] = (float)i;
  __syncthreads();
  const int a = tid, b = (tid * stride_words) % (256 * 16);
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    float x = s[a] + s[b];
    s[a] = x;
    __syncthreads();
  }
  long long t1 = clock64();
  if (tid == 0) per_iter[blockIdx.x] = (float)(t1 - t0) / iters;
  if (s[a] == -1.0f) sink[tid] = s[a];
}
