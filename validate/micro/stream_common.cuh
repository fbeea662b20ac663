// What the streaming micro-benchmarks share (loaded_latency.cu, l2_clock.cu): the global timer, a 16-B load that
// bypasses L1, and one batch of a warp's grid-strided float4 stream.
#pragma once

static __device__ __forceinline__ long long gtimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static __device__ __forceinline__ float4 ld_cg_f4(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

#define BATCH_GROUPS 4
#define GROUP_LOADS 8  // independent 16-B loads in flight per lane
#define BATCH_BYTES (32ull * BATCH_GROUPS * GROUP_LOADS * 16ull)

// One batch: BATCH_GROUPS groups of GROUP_LOADS independent loads, each lane stepping `stride` float4 through the
// buffer of `n_vec` (wrapping around); the values are summed into `acc` so that the loads are kept.
static __device__ __forceinline__ void stream_batch(const float4* __restrict__ stream, unsigned& i, unsigned stride,
                                                    unsigned n_vec, float& acc) {
#pragma unroll
  for (int g = 0; g < BATCH_GROUPS; ++g) {
    float4 v[GROUP_LOADS];
#pragma unroll
    for (int k = 0; k < GROUP_LOADS; ++k) {
      v[k] = ld_cg_f4(stream + i);
      i += stride;
      if (i >= n_vec) i -= n_vec;
    }
#pragma unroll
    for (int k = 0; k < GROUP_LOADS; ++k) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
}
