// gpusim-twin: kernels_ir/hgemm.py::hgemm_mma_pipelined
// mma.sync GEMM (TC_DESIGNS.md, "mma.sync family"): C = A * B^T, bf16 in/out, fp32 accumulation.
// Defaults of this twin: stages=3, swizzle=128B (-DSTAGES=3 -DSWIZZLE=128); the body is in hgemm_mma_common.cuh.
// Launch: grid (N/128, M/128, 1), block (256, 1, 1), dynamic shared memory STAGES * 32768 bytes (opt in above
// 48 KiB); M % 128 == 0, N % 128 == 0, K % 64 == 0. bf16 arguments are raw 16-bit patterns.
#ifndef STAGES
#define STAGES 3
#endif
#ifndef SWIZZLE
#define SWIZZLE 128
#endif
#include "hgemm_mma_common.cuh"

extern "C" __global__ void __launch_bounds__(HG_THREADS)
hgemm_mma_pipelined(int M, int N, int K, const unsigned short* A, const unsigned short* B, unsigned short* C) {
  hgemm_mma_body(M, N, K, A, B, C);
}
