// gpusim-twin: kernels_ir/sgemm.py::sgemm_autotuned
// Ladder #9 (Boehm kernel 9, "autotuned"): sgemm_vectorized's design with BK=16 and load loops.
// Warptile of the thread grid: WM = 16*TM, WN = 16*TN (16x16 threads), WMITER = BM/WM, WNITER = BN/WN
// (both 1 for BM=BN=128, TM=TN=8: thread (row, col) = (tid/16, tid%16) computes an 8x8 block of C).
// The body is the public kernel's (siboehm/SGEMM_CUDA src/kernels/9_kernel_autotuned.cuh @ 60cba6f, MIT;
// template parameters as defines, uint spelled out): no #pragma unroll, so nvcc keeps the dotIdx loop rolled as
// in the public build (issue 29: the fully unrolled twin ran 0.81x the public kernel's time).
// Launch: grid (N/BN, M/BM, 1), block (NUM_THREADS = 256, 1, 1), __launch_bounds__(256).
// Requires M % BM, N % BN, K % BK == 0 and 16-byte aligned rows.
#define BM 128
#define BN 128
#define BK 16
#define TM 8
#define TN 8
#define NUM_THREADS 256
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm_autotuned(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;

  // size of warptile
  constexpr int WM = TM * 16;
  constexpr int WN = TN * 16;
  // iterations of warptile
  constexpr int WMITER = CEIL_DIV(BM, WM);
  constexpr int WNITER = CEIL_DIV(BN, WN);

  // Placement of the thread in the warptile
  const int threadCol = threadIdx.x % (WN / TN);
  const int threadRow = threadIdx.x / (WN / TN);

  // allocate space for the current blocktile in smem
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  // Move blocktile to beginning of A's row and B's column
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  // calculating the indices that this thread will load into SMEM
  // we'll load 128bit / 32bit = 4 elements per thread at each step
  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  constexpr unsigned int rowStrideA = (NUM_THREADS * 4) / BK;
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);
  constexpr unsigned int rowStrideB = NUM_THREADS / (BN / 4);

  // allocate thread-local cache for results in registerfile
  float threadResults[WMITER * WNITER * TM * TN] = {0.0};
  float regM[TM] = {0.0};
  float regN[TN] = {0.0};

  // outer-most loop over block tiles
  for (unsigned int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // populate the SMEM caches
    for (unsigned int offset = 0; offset + rowStrideA <= BM; offset += rowStrideA) {
      float4 tmp = reinterpret_cast<float4 *>(
          &A[(innerRowA + offset) * K + innerColA * 4])[0];
      // transpose A while storing it
      As[(innerColA * 4 + 0) * BM + innerRowA + offset] = tmp.x;
      As[(innerColA * 4 + 1) * BM + innerRowA + offset] = tmp.y;
      As[(innerColA * 4 + 2) * BM + innerRowA + offset] = tmp.z;
      As[(innerColA * 4 + 3) * BM + innerRowA + offset] = tmp.w;
    }

    for (unsigned int offset = 0; offset + rowStrideB <= BK; offset += rowStrideB) {
      reinterpret_cast<float4 *>(
          &Bs[(innerRowB + offset) * BN + innerColB * 4])[0] =
          reinterpret_cast<float4 *>(
              &B[(innerRowB + offset) * N + innerColB * 4])[0];
    }
    __syncthreads();

    for (unsigned int wmIdx = 0; wmIdx < WMITER; ++wmIdx) {
      for (unsigned int wnIdx = 0; wnIdx < WNITER; ++wnIdx) {
        // calculate per-thread results
        for (unsigned int dotIdx = 0; dotIdx < BK; ++dotIdx) {
          // block into registers
          for (unsigned int i = 0; i < TM; ++i) {
            regM[i] = As[dotIdx * BM + (wmIdx * WM) + threadRow * TM + i];
          }
          for (unsigned int i = 0; i < TN; ++i) {
            regN[i] = Bs[dotIdx * BN + (wnIdx * WN) + threadCol * TN + i];
          }
          for (unsigned int resIdxM = 0; resIdxM < TM; ++resIdxM) {
            for (unsigned int resIdxN = 0; resIdxN < TN; ++resIdxN) {
              threadResults[(wmIdx * TM + resIdxM) * (WNITER * TN) +
                            wnIdx * TN + resIdxN] +=
                  regM[resIdxM] * regN[resIdxN];
            }
          }
        }
      }
    }
    __syncthreads();
    // advance blocktile
    A += BK;     // move BK columns to right
    B += BK * N; // move BK rows down
  }

  // write out the results
  for (unsigned int wmIdx = 0; wmIdx < WMITER; ++wmIdx) {
    for (unsigned int wnIdx = 0; wnIdx < WNITER; ++wnIdx) {
      float *C_interim = C + (wmIdx * WM * N) + (wnIdx * WN);
      for (unsigned int resIdxM = 0; resIdxM < TM; resIdxM += 1) {
        for (unsigned int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
          // load C vector into registers
          float4 tmp = reinterpret_cast<float4 *>(
              &C_interim[(threadRow * TM + resIdxM) * N + threadCol * TN +
                         resIdxN])[0];
          // perform GEMM update in reg
          const int i =
              (wmIdx * TM + resIdxM) * (WNITER * TN) + wnIdx * TN + resIdxN;
          tmp.x = alpha * threadResults[i + 0] + beta * tmp.x;
          tmp.y = alpha * threadResults[i + 1] + beta * tmp.y;
          tmp.z = alpha * threadResults[i + 2] + beta * tmp.z;
          tmp.w = alpha * threadResults[i + 3] + beta * tmp.w;
          // write back
          reinterpret_cast<float4 *>(&C_interim[(threadRow * TM + resIdxM) * N +
                                                threadCol * TN + resIdxN])[0] =
              tmp;
        }
      }
    }
  }
}
