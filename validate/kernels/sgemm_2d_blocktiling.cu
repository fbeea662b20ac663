// gpusim-twin: kernels_ir/sgemm.py::sgemm_2d_blocktiling
// Ladder #5 (Boehm kernel 5): 2D blocktiling, each thread computes a TMxTN block of C.
// Launch: grid (N/BN, M/BM, 1), block (BM*BN/(TM*TN) = 256, 1, 1). Requires M % BM, N % BN, K % BK == 0. Tile sizes can be set with -DBM=... (validate/run_fp32_knobs.py).
// (Boehm falls back to BM=BN=64 when M or N < 128; all validation shapes have M, N >= 128.)
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif

extern "C" __global__ void sgemm_2d_blocktiling(int M, int N, int K, float alpha, const float* A,
                                                const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const unsigned int numThreadsBlocktile = (BM * BN) / (TM * TN);
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned int innerRowA = threadIdx.x / BK;
  const unsigned int innerColA = threadIdx.x % BK;
  const unsigned int strideA = numThreadsBlocktile / BK;  // 32 rows of As per pass
  const unsigned int innerRowB = threadIdx.x / BN;
  const unsigned int innerColB = threadIdx.x % BN;
  const unsigned int strideB = numThreadsBlocktile / BN;  // 2 rows of Bs per pass

  float threadResults[TM * TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) threadResults[i] = 0.0f;
  float regM[TM];
  float regN[TN];

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    for (unsigned int loadOffset = 0; loadOffset < BM; loadOffset += strideA) {
      As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];
    }
    for (unsigned int loadOffset = 0; loadOffset < BK; loadOffset += strideB) {
      Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];
    }
    __syncthreads();
    A += BK;
    B += BK * N;
#pragma unroll
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
#pragma unroll
      for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
#pragma unroll
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
    for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
      const int idx = (threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN;
      C[idx] = alpha * threadResults[resIdxM * TN + resIdxN] + beta * C[idx];
    }
  }
}
