// gpusim-twin: kernels_ir/membound.py::mem_gather
// Gather: y[i] = x[idx[i]] for N floats (N a power of two), 256 threads per block, with the index array
// idx[i] = (i * 2654435761) mod N (a permutation: the multiplier is odd), written by the host.
extern "C" __global__ void mem_gather(const float* __restrict__ x, const unsigned int* __restrict__ idx,
                                      float* __restrict__ y) {
  unsigned int i = blockIdx.x * 256 + threadIdx.x;
  y[i] = x[idx[i]];
}
