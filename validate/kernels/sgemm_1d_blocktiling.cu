// gpusim-twin: kernels_ir/sgemm.py::sgemm_1d_blocktiling
// Ladder #4 (Boehm kernel 4): 1D blocktiling, each thread computes TM results of one column of C.
// Launch: grid (N/BN, M/BM, 1), block (BM*BN/TM = 512, 1, 1). Requires M % BM, N % BN, K % BK == 0. Tile sizes can be set with -DBM=... (validate/run_fp32_knobs.py).
// Needs BM*BK == BN*BK == BM*BN/TM (one element of As and Bs per thread per tile).
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif

extern "C" __global__ void sgemm_1d_blocktiling(int M, int N, int K, float alpha, const float* A,
                                                const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const int threadCol = threadIdx.x % BN;
  const int threadRow = threadIdx.x / BN;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned int innerColA = threadIdx.x % BK;
  const unsigned int innerRowA = threadIdx.x / BK;
  const unsigned int innerColB = threadIdx.x % BN;
  const unsigned int innerRowB = threadIdx.x / BN;

  float threadResults[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) threadResults[i] = 0.0f;

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
#pragma unroll
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      const float tmpB = Bs[dotIdx * BN + threadCol];
#pragma unroll
      for (int resIdx = 0; resIdx < TM; ++resIdx) {
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int resIdx = 0; resIdx < TM; ++resIdx) {
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
  }
}
