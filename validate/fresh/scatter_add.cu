// Scatter-add (index_add): each element added to a bin chosen by data, with global atomics.
extern "C" __global__ void scatter_add(const int* idx, const float* val, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[idx[i]], val[i]);
}
