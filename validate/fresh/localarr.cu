extern "C" __global__ void localarr(const float* x, float* y, int n) {
  float a[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < 64; j++) a[j] = x[(i * 7 + j) % n];
  float s = 0.f;
  for (int j = 0; j < 64; j++) s += a[(j * 13 + i) & 63];
  y[i] = s;
}
