// Stream compaction: every element above a threshold appended to out through one global counter (atomicAdd).
extern "C" __global__ void compact(const float* x, float* out, unsigned* count, float t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > t) out[atomicAdd(count, 1u)] = x[i];
}
