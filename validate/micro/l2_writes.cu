// How ncu's L2 counts stores (validate/micro/run_l2_writes.py): lookups per stored sector, their hits, and what
// reaches DRAM, for stores of 1 to 32 sectors per warp request into a buffer that fits the L2 or does not.
// l2w_store: thread i of the grid stores one float at out[(i * stride) % n] (stride 1: 4 sectors of one line per
// warp; stride 8: one sector per lane, 32 per request). l2w_copy: out[i] = in[i] (the STREAM copy's pattern).
extern "C" __global__ void l2w_store(float* __restrict__ out, long long n, int stride) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  out[(i * stride) % n] = 1.0f;
}

extern "C" __global__ void l2w_copy(const float* __restrict__ in, float* __restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
