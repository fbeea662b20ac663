// gpusim-twin: kernels_ir/membound.py::mem_reduce_interleaved
// Harris's block reduction 2, "interleaved addressing": each 256-thread block sums 256 floats; at stride s the
// threads with 2*s*tid < 256 add sdata[2*s*tid + s] into sdata[2*s*tid] (shared bank conflicts grow with s).
// One partial sum per block.
extern "C" __global__ void mem_reduce_interleaved(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * 256 + tid];
  __syncthreads();
#pragma unroll
  for (unsigned int s = 1; s < 256; s *= 2) {
    unsigned int index = 2 * s * tid;
    if (index < 256) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
