// gpusim-twin: kernels_ir/membound.py::mem_add
// STREAM add: c = a + b over N floats, one float4 per thread, 256 threads per block.
extern "C" __global__ void mem_add(const float4* __restrict__ a, const float4* __restrict__ b,
                                   float4* __restrict__ c) {
  int i = blockIdx.x * 256 + threadIdx.x;
  float4 u = a[i], v = b[i];
  c[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
}
