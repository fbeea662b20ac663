// Double-precision a*x + y: the FP64 pipe, and 16 bytes of traffic per element.
extern "C" __global__ void daxpy(double a, const double* x, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
