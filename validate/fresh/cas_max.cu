// The maximum of an array with a float atomicMax built from atomicCAS (the CUDA guide's pattern): a lane retries while
// another changed the word. Written as a new user writes it.
__device__ float atomic_max_float(float* addr, float v) {
  int* p = (int*)addr;
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(p, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}
extern "C" __global__ void cas_max(const float* x, float* m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_float(m, x[i]);
}
