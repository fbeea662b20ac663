"""Which sub-partition (SMSP) a warp runs on when a CTA has fewer than four warps.

    python3 validate/micro/run_subpartition.py --out validate/measurements/h100/subpartition-2026-11-25.json

One grid of CTAs runs an FFMA-bound body (8 independent chains per thread, the FP32 pipe's rate is one warp
instruction per cycle per SMSP). With 16 warps per SM in CTAs of 1, 2, 4 or 8 warps (all resident at once, one wave),
each warp's loop takes as long as the warps that share its SMSP make it: if a CTA's warps went to SMSPs 0..w-1 by
their index in the CTA, CTAs of 1 or 2 warps would pile 16 warps onto one or two SMSPs and run 4x / 2x slower than
CTAs of 4. Each warp also records %warpid (the warp's slot on the SM) and %smid. clock64 per warp around the loop.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SRC = r"""
extern "C" __global__ void sp_body(int iters, float seed, float* sink, long long* rec) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = seed + c * threadIdx.x;
  unsigned int wid, smid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  __syncwarp();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 64; ++i) x[i & 7] = fmaf(x[i & 7], 1.000001f, x[(i + 3) & 7]);
  }
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[0] = s;
  if ((threadIdx.x & 31) == 0) {
    const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    rec[4 * w] = t1 - t0;
    rec[4 * w + 1] = wid;
    rec[4 * w + 2] = smid;
    rec[4 * w + 3] = threadIdx.x >> 5;
  }
}
"""


def main() -> int:
    a, cp, np, res, sms = common.micro_start(__doc__.splitlines()[0])
    k = cp.RawKernel(SRC, "sp_body", options=("-std=c++17",))
    sink = cp.zeros(4, dtype=cp.float32)
    iters = 4096
    rows = []
    for warps_per_cta in (1, 2, 4, 8):
        ctas = sms * 16 // warps_per_cta  # 16 warps per SM, all resident
        rec = cp.zeros(ctas * warps_per_cta * 4, dtype=cp.int64)
        k((ctas,), (32 * warps_per_cta,), (np.int32(16), np.float32(1.0), sink, rec))  # warm-up
        k((ctas,), (32 * warps_per_cta,), (np.int32(iters), np.float32(1.0), sink, rec))
        cp.cuda.runtime.deviceSynchronize()
        r = rec.get().reshape(-1, 4)
        cyc = r[:, 0]
        per_instr = float(np.median(cyc)) / (iters * 64)
        # warps per SMSP as %warpid % 4 says, on SM 0
        on0 = r[r[:, 2] == r[0, 2]]
        counts = np.bincount(on0[:, 1] % 4, minlength=4).tolist()
        rows.append({"warps_per_cta": warps_per_cta, "ctas": ctas, "warps_per_sm": 16,
                     "cycles_per_ffma_per_warp_median": per_instr,
                     "cycles_per_ffma_per_warp_max": float(cyc.max()) / (iters * 64),
                     "sm0_warps_by_warpid_mod4": counts,
                     "sm0_warpids": sorted(int(x) for x in on0[:, 1])})
        common.log(f"{warps_per_cta} warps per CTA: {per_instr:.3f} cycles per FFMA per warp (4.0 = 4 warps per SMSP), "
                   f"SM0 warpid%4 counts {counts}")
    res["results"]["subpartition"] = {"rows": rows, "unit": "cycles per warp FFMA; 16 warps per SM: 4.0 when they "
                                                             "are spread over the 4 SMSPs"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
