// Transcendentals per element (fast-math intrinsics): the SFU beside the FP32 pipe.
extern "C" __global__ void sfu_mix(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float a = 0.f;
#pragma unroll 4
    for (int k = 0; k < 16; k++) {
      a += __sinf(v + k) * __expf(-v * k) + rsqrtf(v + k + 1.f);
    }
    y[i] = a;
  }
}
