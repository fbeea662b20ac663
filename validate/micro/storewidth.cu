// Store throughput against access width (driven by validate/micro/run_store_width.py, NVRTC, -DW=1|2|4|8|16):
// every thread stores W-byte values at consecutive positions (a warp instruction covers 32*W contiguous bytes),
// grid-stride over `n` elements of the buffer, `reps` passes (a small buffer stays in L2).
#ifndef W
#define W 4
#endif
#if W == 1
typedef unsigned char T;
#elif W == 2
typedef unsigned short T;
#elif W == 4
typedef unsigned int T;
#elif W == 8
typedef uint2 T;
#else
typedef uint4 T;
#endif
static __device__ __forceinline__ T make(unsigned int v) {
#if W <= 4
  return (T)v;
#elif W == 8
  return make_uint2(v, v);
#else
  return make_uint4(v, v, v, v);
#endif
}

extern "C" __global__ void store_width(T* __restrict__ buf, long long n, int reps) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; ++r)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) buf[i] = make(r + i);
}
