// gpusim-twin: kernels_ir/membound.py::mem_strided
// Strided read: y[i] = x[i * stride] for N outputs, 256 threads per block. A warp's load touches
// min(32, 4 * stride) sectors; the writes stay coalesced.
extern "C" __global__ void mem_strided(const float* __restrict__ x, float* __restrict__ y, int stride) {
  long long i = blockIdx.x * 256 + threadIdx.x;
  y[i] = x[i * stride];
}
