// Inclusive prefix sums of 32-element runs with warp shuffles (__shfl_up_sync), float4 loads and stores.
extern "C" __global__ void warp_scan(const float4* x, float4* y, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  float4 v = i < n4 ? x[i] : make_float4(0.f, 0.f, 0.f, 0.f);
  v.y += v.x; v.z += v.y; v.w += v.z;
  float run = v.w;
  for (int o = 1; o < 32; o <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, run, o);
    if (lane >= o) run += t;
  }
  float before = run - v.w;
  v.x += before; v.y += before; v.z += before; v.w += before;
  if (i < n4) y[i] = v;
}
