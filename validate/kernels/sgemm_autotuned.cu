// gpusim-twin: kernels_ir/sgemm.py::sgemm_autotuned
// Ladder #9 (Boehm kernel 9, "autotuned"): sgemm_vectorized's design with BK=16 and load loops.
// Warptile of the thread grid: WM = 16*TM, WN = 16*TN (16x16 threads), WMITER = BM/WM, WNITER = BN/WN
// (both 1 for BM=BN=128, TM=TN=8: thread (row, col) = (tid/16, tid%16) computes an 8x8 block of C).
// Launch: grid (N/BN, M/BM, 1), block (NUM_THREADS = 256, 1, 1), __launch_bounds__(256).
// Requires M % BM, N % BN, K % BK == 0 and 16-byte aligned rows.
#define BM 128
#define BN 128
#define BK 16
#define TM 8
#define TN 8
#define NUM_THREADS 256
#define WM (TM * 16)
#define WN (TN * 16)
#define WMITER ((BM + WM - 1) / WM)
#define WNITER ((BN + WN - 1) / WN)

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm_autotuned(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const int threadCol = threadIdx.x % (WN / TN);
  const int threadRow = threadIdx.x / (WN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  const unsigned int rowStrideA = (NUM_THREADS * 4) / BK;  // 64
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);
  const unsigned int rowStrideB = NUM_THREADS / (BN / 4);  // 8

  float threadResults[WMITER * WNITER * TM * TN];
#pragma unroll
  for (int i = 0; i < WMITER * WNITER * TM * TN; ++i) threadResults[i] = 0.0f;
  float regM[TM];
  float regN[TN];

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
#pragma unroll
    for (unsigned int offset = 0; offset + rowStrideA <= BM; offset += rowStrideA) {
      const float4 tmp = reinterpret_cast<const float4*>(&A[(innerRowA + offset) * K + innerColA * 4])[0];
      As[(innerColA * 4 + 0) * BM + innerRowA + offset] = tmp.x;
      As[(innerColA * 4 + 1) * BM + innerRowA + offset] = tmp.y;
      As[(innerColA * 4 + 2) * BM + innerRowA + offset] = tmp.z;
      As[(innerColA * 4 + 3) * BM + innerRowA + offset] = tmp.w;
    }
#pragma unroll
    for (unsigned int offset = 0; offset + rowStrideB <= BK; offset += rowStrideB) {
      reinterpret_cast<float4*>(&Bs[(innerRowB + offset) * BN + innerColB * 4])[0] =
          reinterpret_cast<const float4*>(&B[(innerRowB + offset) * N + innerColB * 4])[0];
    }
    __syncthreads();
#pragma unroll
    for (int wmIdx = 0; wmIdx < WMITER; ++wmIdx) {
#pragma unroll
      for (int wnIdx = 0; wnIdx < WNITER; ++wnIdx) {
#pragma unroll
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
          for (int i = 0; i < TM; ++i) regM[i] = As[dotIdx * BM + wmIdx * WM + threadRow * TM + i];
#pragma unroll
          for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + wnIdx * WN + threadCol * TN + i];
#pragma unroll
          for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
            for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
              threadResults[(wmIdx * TM + resIdxM) * (WNITER * TN) + wnIdx * TN + resIdxN] +=
                  regM[resIdxM] * regN[resIdxN];
            }
          }
        }
      }
    }
    __syncthreads();
    A += BK;
    B += BK * N;
  }
#pragma unroll
  for (int wmIdx = 0; wmIdx < WMITER; ++wmIdx) {
#pragma unroll
    for (int wnIdx = 0; wnIdx < WNITER; ++wnIdx) {
      float* Ci = C + wmIdx * WM * N + wnIdx * WN;
#pragma unroll
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
        for (int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
          float4* cp = reinterpret_cast<float4*>(&Ci[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN]);
          float4 c = cp[0];
          const int i = (wmIdx * TM + resIdxM) * (WNITER * TN) + wnIdx * TN + resIdxN;
          c.x = alpha * threadResults[i + 0] + beta * c.x;
          c.y = alpha * threadResults[i + 1] + beta * c.y;
          c.z = alpha * threadResults[i + 2] + beta * c.z;
          c.w = alpha * threadResults[i + 3] + beta * c.w;
          cp[0] = c;
        }
      }
    }
  }
}
