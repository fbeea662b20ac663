// gpusim-twin: kernels_ir/sgemm.py::sgemm_bank_padded
// Ladder #8 (Boehm kernel 8): as sgemm_vectorized, but each row of Bs is padded by EXTRA_COLS = 5 floats
// (row pitch BN + 5 = 133 words), stored with 4 scalar STS per float4 loaded (the pitch breaks 16-B alignment).
// The body is the public kernel's (siboehm/SGEMM_CUDA src/kernels/8_kernel_bank_extra_col.cuh @ 60cba6f, MIT;
// template parameters and extraCols as defines, uint spelled out): no #pragma unroll, so nvcc keeps the dotIdx
// loop rolled as in the public build and reads regN with scalar LDS (issue 29: the fully unrolled twin ran 0.73x
// the public kernel's time).
// Launch: grid (N/BN, M/BM, 1), block (BM*BN/(TM*TN) = 256, 1, 1). Requires M % BM, N % BN, K % BK == 0
// and 16-byte aligned rows (K % 4 == 0, N % 4 == 0). One float4 of A and one of B per thread per tile.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define EXTRA_COLS 5

extern "C" __global__ void sgemm_bank_padded(int M, int N, int K, float alpha, float *A, float *B, float beta,
                                             float *C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;

  // BN/TN are the number of threads to span a column
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  // allocate space for the current blocktile in smem
  __shared__ float As[BM * BK];
  const int extraCols = EXTRA_COLS;
  __shared__ float Bs[BK * (BN + extraCols)];

  // Move blocktile to beginning of A's row and B's column
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  // calculating the indices that this thread will load into SMEM
  // we'll load 128bit / 32bit = 4 elements per thread at each step
  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);

  // allocate thread-local cache for results in registerfile
  float threadResults[TM * TN] = {0.0};
  float regM[TM] = {0.0};
  float regN[TN] = {0.0};

  // outer-most loop over block tiles
  for (unsigned int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // populate the SMEM caches
    // transpose A while loading it
    float4 tmp =
        reinterpret_cast<float4 *>(&A[innerRowA * K + innerColA * 4])[0];
    As[(innerColA * 4 + 0) * BM + innerRowA] = tmp.x;
    As[(innerColA * 4 + 1) * BM + innerRowA] = tmp.y;
    As[(innerColA * 4 + 2) * BM + innerRowA] = tmp.z;
    As[(innerColA * 4 + 3) * BM + innerRowA] = tmp.w;

    tmp = reinterpret_cast<float4 *>(&B[innerRowB * N + innerColB * 4])[0];
    Bs[innerRowB * (BN + extraCols) + innerColB * 4 + 0] = tmp.x;
    Bs[innerRowB * (BN + extraCols) + innerColB * 4 + 1] = tmp.y;
    Bs[innerRowB * (BN + extraCols) + innerColB * 4 + 2] = tmp.z;
    Bs[innerRowB * (BN + extraCols) + innerColB * 4 + 3] = tmp.w;
    __syncthreads();

    // advance blocktile
    A += BK;     // move BK columns to right
    B += BK * N; // move BK rows down

    // calculate per-thread results
    for (unsigned int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      // block into registers
      for (unsigned int i = 0; i < TM; ++i) {
        regM[i] = As[dotIdx * BM + threadRow * TM + i];
      }
      for (unsigned int i = 0; i < TN; ++i) {
        regN[i] = Bs[dotIdx * (BN + extraCols) + threadCol * TN + i];
      }
      for (unsigned int resIdxM = 0; resIdxM < TM; ++resIdxM) {
        for (unsigned int resIdxN = 0; resIdxN < TN; ++resIdxN) {
          threadResults[resIdxM * TN + resIdxN] +=
              regM[resIdxM] * regN[resIdxN];
        }
      }
    }
    __syncthreads();
  }

  // write out the results
  for (unsigned int resIdxM = 0; resIdxM < TM; resIdxM += 1) {
    for (unsigned int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
      // load C vector into registers
      float4 tmp = reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0];
      // perform GEMM update in reg
      tmp.x = alpha * threadResults[resIdxM * TN + resIdxN] + beta * tmp.x;
      tmp.y = alpha * threadResults[resIdxM * TN + resIdxN + 1] + beta * tmp.y;
      tmp.z = alpha * threadResults[resIdxM * TN + resIdxN + 2] + beta * tmp.z;
      tmp.w = alpha * threadResults[resIdxM * TN + resIdxN + 3] + beta * tmp.w;
      // write back
      reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0] =
          tmp;
    }
  }
}
