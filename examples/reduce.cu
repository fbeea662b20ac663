// Block reduction of docs/authoring.md (Harris, "Optimizing Parallel Reduction in CUDA", kernel 3:
// sequential addressing): each 256-thread block sums 256 floats through shared memory.
// IR: examples/reduce_shared.py.
#define THREADS 256

__global__ void reduce_shared(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float sdata[THREADS];
  unsigned tid = threadIdx.x, i = blockIdx.x * THREADS + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
#pragma unroll
  for (unsigned s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
