// A switch on data: each element's op code picks one of eight expressions (the division's and the square root's slow
// paths are subroutines placed after the store). Written as a new user writes it.
extern "C" __global__ void switch_ops(const int* op, const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r;
  switch (op[i] & 7) {
    case 0: r = a[i] + b[i]; break;
    case 1: r = a[i] - b[i]; break;
    case 2: r = a[i] * b[i]; break;
    case 3: r = a[i] / b[i]; break;
    case 4: r = fmaxf(a[i], b[i]); break;
    case 5: r = fminf(a[i], b[i]); break;
    case 6: r = sqrtf(fabsf(a[i])); break;
    default: r = expf(b[i]);
  }
  c[i] = r;
}
