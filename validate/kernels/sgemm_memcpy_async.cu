// gpusim-twin: kernels_ir/sgemm.py::sgemm_memcpy_async
// Ladder #12 (Boehm kernel 12): sgemm_warptiling (same tiles, 128 threads) double-buffered with asynchronous
// global->shared copies. Boehm uses cuda::memcpy_async + two cuda::barrier objects; this twin issues the same
// hardware copies directly with PTX (no headers needed under NVRTC):
//   A: 4-byte cp.async.ca per element (As is stored transposed, so A cannot be copied 16 B at a time),
//      i.e. 16 LDGSTS.32 per thread per K-tile;
//   B: 16-byte cp.async.cg (LDGSTS.128, L1 bypass), 4 per thread per K-tile;
// and synchronises with cp.async.commit_group / wait_group + __syncthreads instead of mbarriers:
//   prologue: copy tile 0 -> buffer 0
//   loop:     copy tile t+1 -> buffer 1-b | wait for tile t | sync | compute buffer b | sync
// Launch: grid (N/BN, M/BM, 1), block (NUM_THREADS = 128, 1, 1), __launch_bounds__(128);
// static shared 2*(BM*BK + BK*BN)*4 = 32 KB. Requires M % BM, N % BN, K % BK == 0, 16-byte aligned rows.
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
#define ROW_STRIDE_A ((NUM_THREADS * 4) / BK)                // 32
#define ROW_STRIDE_B (NUM_THREADS / (BN / 4))                // 4

static __device__ __forceinline__ unsigned int smem_addr(const float* p) {
  unsigned int a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
static __device__ __forceinline__ void cp_async_4(float* dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
static __device__ __forceinline__ void cp_async_16(float* dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int PENDING>
static __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

static __device__ __forceinline__ void load_tile_async(int N, int K, const float* A, const float* B, float* As,
                                                       float* Bs, unsigned int innerRowA, unsigned int innerColA,
                                                       unsigned int innerRowB, unsigned int innerColB) {
#pragma unroll
  for (unsigned int offset = 0; offset + ROW_STRIDE_A <= BM; offset += ROW_STRIDE_A) {
    const float* src = &A[(innerRowA + offset) * K + innerColA * 4];
    cp_async_4(&As[(innerColA * 4 + 0) * BM + innerRowA + offset], src + 0);
    cp_async_4(&As[(innerColA * 4 + 1) * BM + innerRowA + offset], src + 1);
    cp_async_4(&As[(innerColA * 4 + 2) * BM + innerRowA + offset], src + 2);
    cp_async_4(&As[(innerColA * 4 + 3) * BM + innerRowA + offset], src + 3);
  }
#pragma unroll
  for (unsigned int offset = 0; offset + ROW_STRIDE_B <= BK; offset += ROW_STRIDE_B) {
    cp_async_16(&Bs[(innerRowB + offset) * BN + innerColB * 4], &B[(innerRowB + offset) * N + innerColB * 4]);
  }
}

static __device__ __forceinline__ void compute_tile(float* regM, float* regN, float* threadResults,
                                                    const float* As, const float* Bs, unsigned int warpRow,
                                                    unsigned int warpCol, unsigned int threadRowInWarp,
                                                    unsigned int threadColInWarp) {
#pragma unroll
  for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
    for (int wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        regM[wSubRowIdx * TM + i] = As[dotIdx * BM + warpRow * WM + wSubRowIdx * WSUBM + threadRowInWarp * TM + i];
      }
    }
#pragma unroll
    for (int wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
#pragma unroll
      for (int i = 0; i < TN; ++i) {
        regN[wSubColIdx * TN + i] = Bs[dotIdx * BN + warpCol * WN + wSubColIdx * WSUBN + threadColInWarp * TN + i];
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
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
sgemm_memcpy_async(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const unsigned int cRow = blockIdx.y;
  const unsigned int cCol = blockIdx.x;
  const unsigned int warpIdx = threadIdx.x / WARPSIZE;
  const unsigned int warpCol = warpIdx % (BN / WN);
  const unsigned int warpRow = warpIdx / (BN / WN);
  const unsigned int threadIdxInWarp = threadIdx.x % WARPSIZE;
  const unsigned int threadColInWarp = threadIdxInWarp % (WSUBN / TN);
  const unsigned int threadRowInWarp = threadIdxInWarp / (WSUBN / TN);

  __shared__ __align__(16) float As[2 * BM * BK];
  __shared__ __align__(16) float Bs[2 * BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += (cRow * BM + warpRow * WM) * N + cCol * BN + warpCol * WN;

  const unsigned int innerRowA = threadIdx.x / (BK / 4);
  const unsigned int innerColA = threadIdx.x % (BK / 4);
  const unsigned int innerRowB = threadIdx.x / (BN / 4);
  const unsigned int innerColB = threadIdx.x % (BN / 4);

  float threadResults[WMITER * TM * WNITER * TN];
#pragma unroll
  for (int i = 0; i < WMITER * TM * WNITER * TN; ++i) threadResults[i] = 0.0f;
  float regM[WMITER * TM];
  float regN[WNITER * TN];

  int buf = 0;
  load_tile_async(N, K, A, B, As, Bs, innerRowA, innerColA, innerRowB, innerColB);
  cp_async_commit();

  for (int bkIdx = 0; bkIdx < K - BK; bkIdx += BK) {
    load_tile_async(N, K, A + BK, B + BK * N, As + (1 - buf) * BM * BK, Bs + (1 - buf) * BK * BN, innerRowA,
                    innerColA, innerRowB, innerColB);
    cp_async_commit();
    cp_async_wait<1>();  // this thread's copies of tile t have landed
    __syncthreads();     // ... and everyone else's
    compute_tile(regM, regN, threadResults, As + buf * BM * BK, Bs + buf * BK * BN, warpRow, warpCol,
                 threadRowInWarp, threadColInWarp);
    A += BK;
    B += BK * N;
    buf = 1 - buf;
    __syncthreads();  // buffer b is free for the copy issued in the next iteration
  }
  cp_async_wait<0>();
  __syncthreads();
  compute_tile(regM, regN, threadResults, As + buf * BM * BK, Bs + buf * BK * BN, warpRow, warpCol,
               threadRowInWarp, threadColInWarp);

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
