// gpusim-twin: kernels_ir/sgemm.py::sgemm_bank_padded
// Ladder #8 (Boehm kernel 8): as sgemm_vectorized, but each row of Bs is padded by EXTRA_COLS = 5 floats
// (row pitch BN + 5 = 133 words), stored with 4 scalar STS per float4 loaded (the pitch breaks 16-B alignment).
// Launch: grid (N/BN, M/BM, 1), block (BM*BN/(TM*TN) = 256, 1, 1). Requires M % BM, N % BN, K % BK == 0
// and 16-byte aligned rows (K % 4 == 0, N % 4 == 0). One float4 of A and one of B per thread per tile.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define EXTRA_COLS 5

extern "C" __global__ void sgemm_bank_padded(int M, int N, int K, float alpha, const float* A, const float* B,
                                             float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * (BN + EXTRA_COLS)];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);

  float threadResults[TM * TN];
#pragma unroll
  for (int i = 0; i < TM * TN; ++i) threadResults[i] = 0.0f;
  float regM[TM];
  float regN[TN];

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // transpose A while storing it to shared memory
    const float4 tmp = reinterpret_cast<const float4*>(&A[innerRowA * K + innerColA * 4])[0];
    As[(innerColA * 4 + 0) * BM + innerRowA] = tmp.x;
    As[(innerColA * 4 + 1) * BM + innerRowA] = tmp.y;
    As[(innerColA * 4 + 2) * BM + innerRowA] = tmp.z;
    As[(innerColA * 4 + 3) * BM + innerRowA] = tmp.w;
    const float4 tb = reinterpret_cast<const float4*>(&B[innerRowB * N + innerColB * 4])[0];
    Bs[innerRowB * (BN + EXTRA_COLS) + innerColB * 4 + 0] = tb.x;
    Bs[innerRowB * (BN + EXTRA_COLS) + innerColB * 4 + 1] = tb.y;
    Bs[innerRowB * (BN + EXTRA_COLS) + innerColB * 4 + 2] = tb.z;
    Bs[innerRowB * (BN + EXTRA_COLS) + innerColB * 4 + 3] = tb.w;
    __syncthreads();
    A += BK;
    B += BK * N;
#pragma unroll
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (int i = 0; i < TM; ++i) regM[i] = As[dotIdx * BM + threadRow * TM + i];
#pragma unroll
      for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * (BN + EXTRA_COLS) + threadCol * TN + i];
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
    for (int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
      float4* cp = reinterpret_cast<float4*>(&C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN]);
      float4 c = cp[0];
      c.x = alpha * threadResults[resIdxM * TN + resIdxN + 0] + beta * c.x;
      c.y = alpha * threadResults[resIdxM * TN + resIdxN + 1] + beta * c.y;
      c.z = alpha * threadResults[resIdxM * TN + resIdxN + 2] + beta * c.z;
      c.w = alpha * threadResults[resIdxM * TN + resIdxN + 3] + beta * c.w;
      cp[0] = c;
    }
  }
}
