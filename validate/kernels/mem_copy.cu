// gpusim-twin: kernels_ir/membound.py::mem_copy
// One float4 per thread, 256 threads per block, no grid-stride loop.
extern "C" __global__ void mem_copy(const float4* __restrict__ x, float4* __restrict__ y) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}
