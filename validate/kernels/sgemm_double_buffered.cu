// gpusim-twin: kernels_ir/sgemm.py::sgemm_double_buffered
// Ladder #11 (Boehm kernel 11): warptiling with two shared-memory buffers and a split of the block:
// threads 0..127 ("group 0") and 128..255 ("group 1") each load whole tiles (as if the block had 128 threads)
// while the other group computes. Per pair of K-tiles (buffers B0, B1):
//   group 0: compute B0 | sync | compute B1 | sync | load tile+2 -> B0 | sync
//   group 1: load tile+1 -> B1 | sync | compute B0 | sync | compute B1 | sync
// All 8 warps compute: warp w owns the WM x WN = 128x32 column slab w of the 128x256 block tile
// (WMITER = 2 sub-tiles of 64x32; lane (r, c) = (lane/4, lane%4) computes 8x8 per sub-tile).
// Launch: grid (N/BN, M/BM, 1), block (NUM_THREADS = 256, 1, 1), __launch_bounds__(256);
// static shared 2*(BM*BK + BK*BN)*4 = 48 KB. Requires M % 128, N % 256, K % 16 == 0.
#define BM 128
#define BN 256
#define BK 16
#define WM 128
#define WN 32
#define WNITER 1
#define TM 8
#define TN 8
#define NUM_THREADS 256
#define WARPSIZE 32
#define WMITER ((WM * WN) / (WARPSIZE * TM * TN * WNITER))  // 2
#define WSUBM (WM / WMITER)                                  // 64
#define WSUBN (WN / WNITER)                                  // 32
#define LOAD_THREADS (NUM_THREADS / 2)
#define ROW_STRIDE_A ((LOAD_THREADS * 4) / BK)  // 32
#define ROW_STRIDE_B (LOAD_THREADS / (BN / 4))  // 2

static __device__ __forceinline__ void load_tile(int N, int K, const float* A, const float* B, float* As, float* Bs,
                                                 unsigned int innerRowA, unsigned int innerColA,
                                                 unsigned int innerRowB, unsigned int innerColB) {
  for (unsigned int offset = 0; offset + ROW_STRIDE_A <= BM; offset += ROW_STRIDE_A) {
    const float4 tmp = reinterpret_cast<const float4*>(&A[(innerRowA + offset) * K + innerColA * 4])[0];
    As[(innerColA * 4 + 0) * BM + innerRowA + offset] = tmp.x;
    As[(innerColA * 4 + 1) * BM + innerRowA + offset] = tmp.y;
    As[(innerColA * 4 + 2) * BM + innerRowA + offset] = tmp.z;
    As[(innerColA * 4 + 3) * BM + innerRowA + offset] = tmp.w;
  }
  for (unsigned int offset = 0; offset + ROW_STRIDE_B <= BK; offset += ROW_STRIDE_B) {
    reinterpret_cast<float4*>(&Bs[(innerRowB + offset) * BN + innerColB * 4])[0] =
        reinterpret_cast<const float4*>(&B[(innerRowB + offset) * N + innerColB * 4])[0];
  }
}

static __device__ __forceinline__ void compute_tile(float* regM, float* regN, float* threadResults,
                                                    const float* As, const float* Bs, unsigned int warpRow,
                                                    unsigned int warpCol, unsigned int threadRowInWarp,
                                                    unsigned int threadColInWarp) {
  for (unsigned int dotIdx = 0; dotIdx < BK; ++dotIdx) {
    for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
      for (int i = 0; i < TM; ++i) {
        regM[wSubRowIdx * TM + i] = As[dotIdx * BM + warpRow * WM + wSubRowIdx * WSUBM + threadRowInWarp * TM + i];
      }
    }
    for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
      for (int i = 0; i < TN; ++i) {
        regN[wSubColIdx * TN + i] = Bs[dotIdx * BN + warpCol * WN + wSubColIdx * WSUBN + threadColInWarp * TN + i];
      }
    }
    for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
      for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
        for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
          for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
            threadResults[(wSubRowIdx * TM + resIdxM) * (WNITER * TN) + wSubColIdx * TN + resIdxN] +=
                regM[wSubRowIdx * TM + resIdxM] * regN[wSubColIdx * TN + resIdxN];
          }
        }
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm_double_buffered(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const unsigned int warpIdx = threadIdx.x / WARPSIZE;
  const unsigned int warpCol = warpIdx % (BN / WN);
  const unsigned int warpRow = warpIdx / (BN / WN);
  const unsigned int threadIdxInWarp = threadIdx.x % WARPSIZE;
  const unsigned int threadColInWarp = threadIdxInWarp % (WSUBN / TN);
  const unsigned int threadRowInWarp = threadIdxInWarp / (WSUBN / TN);

  __shared__ float As[2 * BM * BK];
  __shared__ float Bs[2 * BK * BN];

  const bool group1 = threadIdx.x >= LOAD_THREADS;

  A += cRow * BM * K;
  B += cCol * BN;
  C += (cRow * BM + warpRow * WM) * N + cCol * BN + warpCol * WN;

  const unsigned int ltid = threadIdx.x % LOAD_THREADS;
  const unsigned int innerRowA = ltid / (BK / 4);
  const unsigned int innerColA = ltid % (BK / 4);
  const unsigned int innerRowB = ltid / (BN / 4);
  const unsigned int innerColB = ltid % (BN / 4);

  float threadResults[WMITER * TM * WNITER * TN];
  for (int i = 0; i < WMITER * TM * WNITER * TN; ++i) threadResults[i] = 0.0f;
  float regM[WMITER * TM];
  float regN[WNITER * TN];

  if (!group1) {
    load_tile(N, K, A, B, As, Bs, innerRowA, innerColA, innerRowB, innerColB);  // tile 0 -> B0
  }
  __syncthreads();

  for (int bkIdx = 0; bkIdx < K; bkIdx += 2 * BK) {
    if (!group1) {
      compute_tile(regM, regN, threadResults, As, Bs, warpRow, warpCol, threadRowInWarp, threadColInWarp);
      __syncthreads();
      if (bkIdx + BK < K) {
        compute_tile(regM, regN, threadResults, As + BM * BK, Bs + BK * BN, warpRow, warpCol, threadRowInWarp,
                     threadColInWarp);
      }
      __syncthreads();
      if (bkIdx + 2 * BK < K) {
        load_tile(N, K, A + 2 * BK, B + 2 * BK * N, As, Bs, innerRowA, innerColA, innerRowB, innerColB);
      }
    } else {
      if (bkIdx + BK < K) {
        load_tile(N, K, A + BK, B + BK * N, As + BM * BK, Bs + BK * BN, innerRowA, innerColA, innerRowB,
                  innerColB);
      }
      __syncthreads();
      compute_tile(regM, regN, threadResults, As, Bs, warpRow, warpCol, threadRowInWarp, threadColInWarp);
      __syncthreads();
      if (bkIdx + BK < K) {
        compute_tile(regM, regN, threadResults, As + BM * BK, Bs + BK * BN, warpRow, warpCol, threadRowInWarp,
                     threadColInWarp);
      }
    }
    A += 2 * BK;
    B += 2 * BK * N;
    __syncthreads();
  }

  for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
    for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
      float* Ci = C + (wSubRowIdx * WSUBM) * N + wSubColIdx * WSUBN;
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
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
