// gpusim-twin: kernels_ir/membound.py::mem_scale
// STREAM scale: y = s * x over N floats, one float4 per thread, 256 threads per block.
extern "C" __global__ void mem_scale(const float4* __restrict__ x, float4* __restrict__ y, float s) {
  int i = blockIdx.x * 256 + threadIdx.x;
  float4 v = x[i];
  y[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
}
