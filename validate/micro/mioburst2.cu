// Where does a lone warp's burst of shared accesses wait? (validate/micro/run_mioburst2.py)
// validate/micro/mioburst.cu found one warp's 32 independent conflict-free LDS issuing in 167 cycles (about 4 a load),
// lanes on or off alike, where the L1TEX pipe serves one a cycle. Here the burst length NB varies (the slope and the
// point where issue starts to wait give the dispatch interval and the queue's depth), and the active warps are chosen
// by a mask (warps 0 and 4 share sub-partition 0; 0-3 are on four), so a per-warp and a per-sub-partition limit
// differ. op 0: ld.shared.f32 under a predicate (on or off for every lane), op 1: st.shared.f32
// unpredicated (ptxas turns a predicated one into a branch around it). Per warp: clock64 before the burst and after its last issue.
template <int NB, int OP>
__device__ void burst(unsigned int mask, int lim_on, int stride_words, float* s, float* sink, long long* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (!((mask >> warp) & 1u)) return;
  const unsigned int base = (unsigned int)__cvta_generic_to_shared(&s[(lane * stride_words) % 1024]);
  float v[NB > 0 ? NB : 1];
#pragma unroll
  for (int i = 0; i < NB; ++i) v[i] = 0.0f;
  long long t0, t1;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
#pragma unroll
  for (int i = 0; i < NB; ++i) {
    if (OP == 0)
      asm volatile("{ .reg .pred p; setp.lt.s32 p, %1, %2; @p ld.shared.f32 %0, [%3]; }"
                   : "+f"(v[i]) : "r"(lane), "r"(lim_on), "r"(base + ((128u * i) & 4095u)) : "memory");
    else
      asm volatile("st.shared.f32 [%0], %1;" :: "r"(base + ((128u * i) & 4095u)), "f"((float)i) : "memory");
  }
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < NB; ++i) acc += v[i];
  if (lane == 0) out[blockIdx.x * 32 + warp] = t1 - t0;
  if (acc == 1234.5f) sink[0] = acc;
}

#define K(NB, OP)                                                                                              \
  extern "C" __global__ void burst_##NB##_##OP(unsigned int mask, int lim_on, int stride_words, float* sink,    \
                                               long long* out) {                                            \
    __shared__ float s[2048];                                                                                  \
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = 1.0f;                                          \
    __syncthreads();                                                                                           \
    burst<NB, OP>(mask, lim_on, stride_words, s, sink, out);                                                   \
  }
K(0, 0) K(1, 0) K(2, 0) K(4, 0) K(8, 0) K(12, 0) K(16, 0) K(24, 0) K(32, 0) K(48, 0) K(64, 0)
K(0, 1) K(1, 1) K(2, 1) K(4, 1) K(8, 1) K(12, 1) K(16, 1) K(24, 1) K(32, 1) K(48, 1) K(64, 1)
