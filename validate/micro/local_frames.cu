// Local memory (a per-thread array indexed at run time) as the L1 and L2 keep it: each thread stores FRAME floats,
// then reads them back ROUNDS times in a permuted order (element (j * 13 + i) % FRAME: a warp's lanes read 32
// different elements), so the compiler must keep the array in local memory. Dynamic shared memory (unused but for
// one word) shrinks the L1 and the CTAs an SM holds.
#ifndef FRAME
#define FRAME 64
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
extern "C" __global__ void local_frames(const float* x, float* y, int n) {
  extern __shared__ float pad[];
  float a[FRAME];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < FRAME; j++) a[j] = x[(i + j * 32) & (n - 1)];
  float s = 0.f;
  for (int r = 0; r < ROUNDS; r++)
    for (int j = 0; j < FRAME; j++) s += a[(j * 13 + i + r) & (FRAME - 1)];
  if (threadIdx.x == 0) pad[0] = s;
  y[i] = s;
}
