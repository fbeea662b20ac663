// Do shared loads and stores share the L1TEX data pipe's one wavefront a cycle? (validate/micro/run_ldstmix.py)
// validate/micro/run_offlane.py measured loads alone and stores alone at 1.0 instruction a cycle an SM. Here one CTA per
// SM runs `warps` warps; each warp's loop issues NLD independent conflict-free loads and NST conflict-free stores
// (to other words), `stride_words` between lanes of the loads (1: one wavefront; 8: an 8-way conflict). Each warp
// records its clock64 cycles over the loop; the SM's instructions (and wavefronts) a cycle follow.
template <int NLD, int NST>
__device__ void mix(int iters, int stride_words, float* sink, long long* out) {
  __shared__ float s[4096];
  for (int i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  volatile float* vs = s;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int la = (lane * stride_words) % 1024;
  float acc = 0.f;
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    float x[NLD > 0 ? NLD : 1];
#pragma unroll
    for (int k = 0; k < NLD; ++k) x[k] = vs[la + 1024 * (k % 2)];
#pragma unroll
    for (int k = 0; k < NST; ++k) vs[2048 + 32 * (k % 8) + lane + 256 * (warp % 4)] = (float)i;
#pragma unroll
    for (int k = 0; k < NLD; ++k) asm volatile("" :: "f"(x[k]));
  }
  long long t1 = clock64();
  if (lane == 0) out[blockIdx.x * 32 + warp] = t1 - t0;
  if (acc == 1234.5f) sink[0] = acc;
}
#define K(A, B) extern "C" __global__ void mix_##A##_##B(int iters, int stride, float* sink, long long* out) { mix<A, B>(iters, stride, sink, out); }
K(8, 0) K(0, 8) K(4, 4) K(6, 2) K(2, 6) K(2, 1) K(4, 0) K(0, 4)
