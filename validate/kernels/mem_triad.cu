// gpusim-twin: kernels_ir/membound.py::mem_triad
// STREAM triad: a = b + s * c over N floats, one float4 per thread, 256 threads per block.
extern "C" __global__ void mem_triad(float4* __restrict__ a, const float4* __restrict__ b,
                                     const float4* __restrict__ c, float s) {
  int i = blockIdx.x * 256 + threadIdx.x;
  float4 u = b[i], v = c[i];
  a[i] = make_float4(u.x + s * v.x, u.y + s * v.y, u.z + s * v.z, u.w + s * v.w);
}
