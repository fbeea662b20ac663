// gpusim-twin: kernels_ir/sgemm.py::sgemm_naive
// Ladder #1 (Boehm kernel 1): one thread per element of C.
// Launch: grid (M/32, N/32, 1), block (32, 32, 1). threadIdx.x walks M (rows of C), so the 32 threads
// of a warp read 32 different rows of A (uncoalesced, stride K) and the same element of B (broadcast).
// Row-major A (MxK), B (KxN), C (MxN): C = alpha*A@B + beta*C.
#define BLOCKSIZE 32

extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                                       float beta, float* C) {
  const unsigned int x = blockIdx.x * BLOCKSIZE + threadIdx.x;  // row of C
  const unsigned int y = blockIdx.y * BLOCKSIZE + threadIdx.y;  // column of C
  if (x < (unsigned int)M && y < (unsigned int)N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[x * K + i] * B[i * N + y];
    }
    C[x * N + y] = alpha * tmp + beta * C[x * N + y];
  }
}
