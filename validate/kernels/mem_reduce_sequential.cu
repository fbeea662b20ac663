// gpusim-twin: kernels_ir/membound.py::mem_reduce_sequential
// Harris's block reduction 3, "sequential addressing": each 256-thread block sums 256 floats; at stride s the
// threads below s add sdata[tid + s] into sdata[tid] (no bank conflicts). One partial sum per block.
extern "C" __global__ void mem_reduce_sequential(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
#pragma unroll
  for (unsigned int s = 128; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
