// How much of a row read twice by its own CTA stays in the H100's L2 between the two reads, when every resident CTA
// reads its own row (a norm's or a softmax's passes)? One CTA of 256 threads per row of row4 float4s: it sums its row
// (default loads, as a user's kernel has them), then sums it again; the footprint between a line's two reads is the
// resident CTAs' rows. Occupancy is set by the dynamic shared memory the launch asks for.
extern "C" __global__ void row_twice(const float4* __restrict__ x, int row4, float* out) {
  extern __shared__ float pad[];
  const float4* row = x + (size_t)blockIdx.x * row4;
  float acc = 0.f;
  for (int c = threadIdx.x; c < row4; c += blockDim.x) { float4 v = row[c]; acc += (v.x + v.y) + (v.z + v.w); }
  __syncthreads();
  for (int c = threadIdx.x; c < row4; c += blockDim.x) { float4 v = row[c]; acc += (v.x - v.y) + (v.z - v.w); }
  if (acc == 1234.5f) pad[threadIdx.x] = acc;
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
