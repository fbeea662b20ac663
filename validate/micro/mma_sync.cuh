// What the tensor-core micro-benchmarks share (ldsm_mma.cu, copy_split.cu): ldmatrix and mma.sync (not volatile: ptxas
// drops a load whose fragments nothing uses), a batch of copies, and the end of a timed warp.
#pragma once

__device__ __forceinline__ void ldsm4(unsigned addr, unsigned (&r)[4]) {
  asm("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One batch of hgemm_mma_pipelined's copies (ldsm_mma.cu, copy_split.cu): wait for all but the warp's last batch, then
// `copies` cp.async of `width` B per lane (16: .cg, 4: .ca) from its CTA's `window` bytes at `win` into a 64 KiB ring at
// shared address `rbase`, and commit them.
template <int copies, int width>
__device__ __forceinline__ void copy_batch(int it, int warp, int lane, unsigned rbase, const char* win,
                                           long long window) {
  asm volatile("cp.async.wait_group 1;" ::: "memory");
  const long long off = ((long long)it * blockDim.x / 32 + warp) * copies * 32 * width;
#pragma unroll
  for (int k = 0; k < copies; ++k) {
    const unsigned dst = rbase + (unsigned)(((warp * copies + k) * 32 * width + lane * width) & (64 * 1024 - 1));
    const char* from = win + ((off + k * 32 * width + lane * width) & (window - 1));
    if constexpr (width == 16) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(from));
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(from));
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// The end of a timed warp: its accumulators into `sink` where nothing reads them (so that the compute stays), and
// lane 0's clock64 at start and end into rec[(block * 32 + warp) * 2 + {0, 1}].
__device__ __forceinline__ void finish(const float (&acc)[16][4], long long t0, long long t1, float* sink,
                                       long long* rec, int warp, int lane) {
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) s += acc[i][0] + acc[i][1] + acc[i][2] + acc[i][3];
  if (s == 1234.5f) sink[threadIdx.x] = s;
  if (lane == 0) {
    rec[(blockIdx.x * 32 + warp) * 2] = t0;
    rec[(blockIdx.x * 32 + warp) * 2 + 1] = t1;
  }
}
