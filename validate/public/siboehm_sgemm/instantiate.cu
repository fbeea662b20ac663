// The public SGEMM ladder (siboehm/SGEMM_CUDA @ 60cba6f, MIT, kernels/ copied unchanged) instantiated with the
// launch settings of its src/runner.cu ("Settings for A6000", the ones its README's figures use), for timing on
// the H100 beside our twins (validate/run_public_sgemm.py). Build (what run_public_sgemm.py runs):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Istub -cubin -o public_sgemm.cubin instantiate.cu
// Kernel 3's carveout (cudaSharedmemCarveoutMaxShared) is set by the runner script before the launch.
#include "kernels/1_naive.cuh"
#include "kernels/2_kernel_global_mem_coalesce.cuh"
#include "kernels/3_kernel_shared_mem_blocking.cuh"
#include "kernels/4_kernel_1D_blocktiling.cuh"
#include "kernels/5_kernel_2D_blocktiling.cuh"
#include "kernels/6_kernel_vectorize.cuh"
#include "kernels/7_kernel_resolve_bank_conflicts.cuh"
#include "kernels/8_kernel_bank_extra_col.cuh"
#include "kernels/9_kernel_autotuned.cuh"
#include "kernels/10_kernel_warptiling.cuh"
#include "kernels/11_kernel_double_buffering.cuh"
#include "kernels/12_kernel_double_buffering.cuh"

template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *, const float *, float,
                                                       float *);
template __global__ void sgemm_shared_mem_block<32>(int, int, int, float, const float *, const float *, float,
                                                    float *);
template __global__ void sgemm1DBlocktiling<64, 64, 8, 8>(int, int, int, float, const float *, const float *, float,
                                                          float *);
template __global__ void sgemm2DBlocktiling<128, 128, 8, 8, 8>(int, int, int, float, const float *, const float *,
                                                               float, float *);
template __global__ void sgemmVectorize<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmResolveBankConflicts<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float,
                                                                      float *);
template __global__ void sgemmResolveBankExtraCol<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float,
                                                                     float *);
template __global__ void sgemmAutotuned<128, 128, 16, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *, float *,
                                                                             float, float *);
template __global__ void sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>(const int, const int, const int,
                                                                                  const float, float *, float *,
                                                                                  float, float *);
template __global__ void runSgemmDoubleBuffering2<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *,
                                                                                     float *, float, float *);
