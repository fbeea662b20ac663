// Counts the positive elements in a __device__ variable, one atomicAdd per positive element. Written as a new user
// writes it.
__device__ unsigned int positives;
extern "C" __global__ void count_positive(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.f) atomicAdd(&positives, 1u);
}
