// gpusim-twin: kernels_ir/sgemm.py::sgemm_warptiling
// Ladder #10 (Boehm kernel 10): warptiling. 4 warps, each owns a WMxWN = 64x64 tile of the 128x128 block
// tile, computed as WMITER x WNITER sub-tiles of WSUBM x WSUBN (64x16); lane (r, c) = (lane/4, lane%4)
// computes TM x TN = 8x4 per sub-tile. As stored transposed (float4 global loads, 4 scalar STS),
// Bs stored with float4 STS.
// Launch: grid (N/BN, M/BM, 1), block (NUM_THREADS = 128, 1, 1), __launch_bounds__(128).
// Requires M % BM, N % BN, K % BK == 0 and 16-byte aligned rows.
#define BM 128
#define BN 128
#define BK 16
#define WM 64
#define WN 64
#define WNITER 4
#define TM 8
#define TN 4
#define NUM_THREADS 128
#define WARPSIZE 32
#define WMITER ((WM * WN) / (WARPSIZE * TM * TN * WNITER))  // 1
#define WSUBM (WM / WMITER)                                  // 64
#define WSUBN (WN / WNITER)                                  // 16

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm_warptiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const unsigned int warpIdx = threadIdx.x / WARPSIZE;
  const unsigned int warpCol = warpIdx % (BN / WN);
  const unsigned int warpRow = warpIdx / (BN / WN);
  const unsigned int threadIdxInWarp = threadIdx.x % WARPSIZE;
  const unsigned int threadColInWarp = threadIdxInWarp % (WSUBN / TN);
  const unsigned int threadRowInWarp = threadIdxInWarp / (WSUBN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += (cRow * BM + warpRow * WM) * N + cCol * BN + warpCol * WN;

  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  const unsigned int rowStrideA = (NUM_THREADS * 4) / BK;  // 32
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);
  const unsigned int rowStrideB = NUM_THREADS / (BN / 4);  // 4

  float threadResults[WMITER * TM * WNITER * TN];
#pragma unroll
  for (int i = 0; i < WMITER * TM * WNITER * TN; ++i) threadResults[i] = 0.0f;
  float regM[WMITER * TM];
  float regN[WNITER * TN];

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // global -> shared
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
    // shared -> registers -> FFMA
#pragma unroll
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          regM[wSubRowIdx * TM + i] =
              As[dotIdx * BM + warpRow * WM + wSubRowIdx * WSUBM + threadRowInWarp * TM + i];
        }
      }
#pragma unroll
      for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
#pragma unroll
        for (int i = 0; i < TN; ++i) {
          regN[wSubColIdx * TN + i] =
              Bs[dotIdx * BN + warpCol * WN + wSubColIdx * WSUBN + threadColInWarp * TN + i];
        }
      }
#pragma unroll
      for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
#pragma unroll
        for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
#pragma unroll
          for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
            for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
              threadResults[(wSubRowIdx * TM + resIdxM) * (WNITER * TN) + wSubColIdx * TN + resIdxN] +=
                  regM[wSubRowIdx * TM + resIdxM] * regN[wSubColIdx * TN + resIdxN];
            }
          }
        }
      }
    }
    A += BK;
    B += BK * N;
    __syncthreads();
  }
  // epilogue: float4 read-modify-write of C per warp sub-tile
#pragma unroll
  for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
#pragma unroll
    for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
      float* Ci = C + (wSubRowIdx * WSUBM) * N + wSubColIdx * WSUBN;
#pragma unroll
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
        for (int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
          float4* cp = reinterpret_cast<float4*>(
              &Ci[(threadRowInWarp * TM + resIdxM) * N + threadColInWarp * TN + resIdxN]);
          float4 c = cp[0];
          const int i = (wSubRowIdx * TM + resIdxM) * (WNITER * TN) + wSubColIdx * TN + resIdxN;
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
