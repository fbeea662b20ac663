// Subtract each row's mean from the row, in place, with float4 loads: the row is read twice (the mean, then the
// update) and written once. One block of 128 threads per row. Written as a new user writes it.
extern "C" __global__ void center_rows(float4* x, int cols4) {
  __shared__ float part[4];
  float4* row = x + (size_t)blockIdx.x * cols4;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols4; c += blockDim.x) {
    float4 v = row[c];
    s += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  float mean = (part[0] + part[1] + part[2] + part[3]) / (4.f * cols4);
  for (int c = threadIdx.x; c < cols4; c += blockDim.x) {
    float4 v = row[c];
    row[c] = make_float4(v.x - mean, v.y - mean, v.z - mean, v.w - mean);
  }
}
