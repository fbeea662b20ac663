// gpusim-twin: kernels_ir/membound.py::mem_reduce_shuffle
// Block reduction with warp shuffles: each 256-thread block sums 1024 floats (one float4 per thread); every
// warp reduces its lanes with five shfl.down, lane 0 writes the warp's sum to shared memory, and warp 0 reduces
// the 8 warp sums with three more shuffles. One partial sum per block.
extern "C" __global__ void mem_reduce_shuffle(const float4* __restrict__ in, float* __restrict__ out) {
  __shared__ float warp_sums[8];
  unsigned int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  float4 v = in[blockIdx.x * 256 + tid];
  float s = (v.x + v.y) + (v.z + v.w);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < 8 ? warp_sums[lane] : 0.0f;
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) out[blockIdx.x] = s;
  }
}
