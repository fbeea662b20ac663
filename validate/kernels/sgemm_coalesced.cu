// gpusim-twin: kernels_ir/sgemm.py::sgemm_coalesced
// Ladder #2 (Boehm kernel 2): global-memory coalescing. Consecutive threads take consecutive columns of C.
// Launch: grid (M/32, N/32, 1), block (1024, 1, 1).
#define BLOCKSIZE 32

extern "C" __global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                                           float beta, float* C) {
  const int cRow = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
  const int cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
  if (cRow < M && cCol < N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[cRow * K + i] * B[i * N + cCol];
    }
    C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
  }
}
