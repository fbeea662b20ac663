"""The SM clock against tensor activity on the H100 (issue "the SM side": clocks; ``[chip] sm_clock_*``).

    python3 validate/micro/run_clock_duty.py --out validate/measurements/h100/clockduty-2026-11-25.json
    python3 validate/micro/run_clock_duty.py --wgmma --out validate/measurements/h100/clockduty-wgmma-2026-11-26.json

validate/micro/clock_duty.cu: every SM (4 blocks of 256 threads each) runs rounds of `mmas` x 4 mma.sync m16n8k16
bf16 per warp and a filler of `fill` FFMA steps (or __nanosleep: the SM mostly idle) for 200 ms; per case the SM
clock (d clock64 / d %globaltimer, median over blocks) and the tensor activity: mma.sync FLOPs per SM per cycle over
the dense wgmma peak (4096), as gpusim's clock model measures it (``gpusim.metrics.tensor_activity``). The clock
micro (run_clocks.py) measured the two ends (FP32 alone, mma.sync saturated); this fills in between.

``--wgmma``: validate/micro/clock_duty_wgmma.cu, one warpgroup per SM running rounds of `wgs` wgmma m64n256k16 bf16
(one commit and wait per round) and the same fillers: the clock between FP32 alone and wgmma saturated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

RUN_NS = 200_000_000
BLOCKS_PER_SM, THREADS = 4, 256
FLOP_PER_MMA = 2 * 16 * 8 * 16
WGMMA_PEAK_FLOP_PER_CLK_PER_SM = 4096
# (mma.sync rounds, filler steps, filler kind): from FP32 alone to mma.sync alone, and mma.sync with an idle SM
CASES = [(0, 64, 0), (1, 256, 0), (1, 64, 0), (1, 16, 0), (2, 8, 0), (4, 4, 0), (8, 2, 0), (64, 0, 0),
         (1, 64, 1), (1, 8, 1), (4, 2, 1), (0, 64, 0)]
# --wgmma: (wgmmas per round, filler steps, filler kind), one warpgroup per SM
FLOP_PER_WGMMA = 2 * 64 * 256 * 16
WGMMA_CASES = [(0, 64, 0), (64, 0, 0), (16, 0, 0), (4, 0, 0), (1, 0, 0), (8, 16, 1), (8, 64, 1), (4, 64, 1),
               (1, 64, 1), (1, 256, 1), (8, 64, 0), (2, 64, 0)]  # (1, 256, 0) faulted (illegal instruction)


def run_cases(out: Path, key: str, cases, records: int, launch, flop_per_clk, count: str, flop_key: str) -> int:
    """Each case for RUN_NS: ``launch(case, rec)`` runs it with ``records`` records of (clock64 start, end,
    globaltimer start, end, tensor instructions issued); ``flop_per_clk(r, cycles)`` gives its tensor FLOPs per SM per
    cycle. Rows go to ``out`` under ``results[key]`` as each case ends."""
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {key: {"rows": []}}}
    for case in cases:
        n, fill, kind = case
        rec = cp.zeros(records * 5, dtype=cp.int64)
        smi0 = common.nvidia_smi()
        launch(case, rec)
        cp.cuda.runtime.deviceSynchronize()
        smi1 = common.nvidia_smi()
        r = rec.get().reshape(-1, 5).astype(np.float64)
        cycles = r[:, 1] - r[:, 0]
        mhz = cycles / (r[:, 3] - r[:, 2]) * 1e3
        flops = float(np.median(flop_per_clk(r, cycles)))
        row = {count: n, "fill": fill, "filler": "ffma" if kind == 0 else "nanosleep",
               "clock_mhz_median": float(np.median(mhz)), "clock_mhz_min": float(mhz.min()),
               "clock_mhz_max": float(mhz.max()), flop_key: flops,
               "tensor_activity": flops / WGMMA_PEAK_FLOP_PER_CLK_PER_SM,
               "power_w_after": smi1.get("power.draw"), "clocks_sm_before": smi0.get("clocks.sm")}
        res["results"][key]["rows"].append(row)
        common.log(f"{count} {n:3d} fill {fill:3d} {row['filler']:9s}: {row['clock_mhz_median']:.0f} MHz, "
                   f"activity {row['tensor_activity']:.3f}, {row['power_w_after']}")
        common.write_json(out, res)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--wgmma", action="store_true", help="wgmma rounds instead of mma.sync (clock_duty_wgmma.cu)")
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    sink = cp.zeros(16, dtype=cp.float32)
    if a.wgmma:
        mod = cp.RawModule(code=(HERE / "clock_duty_wgmma.cu").read_text(),
                           options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))

        def launch_wgmma(case, rec):
            wgs, fill, kind = case
            mod.get_function(f"clk_duty_wgmma_{wgs}")(
                (sms,), (128,), (np.int64(RUN_NS), np.int32(fill), np.int32(kind), np.uint32(12345), sink, rec),
                shared_mem=2048 + 256 * 32)

        return run_cases(Path(a.out), "clock_duty_wgmma", WGMMA_CASES, sms, launch_wgmma,
                         lambda r, cycles: r[:, 4] * FLOP_PER_WGMMA / cycles, "wgmmas", "wgmma_flop_per_clk_per_sm")
    mod = cp.RawModule(code=(HERE / "clock_duty.cu").read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))
    f = mod.get_function("clk_duty")
    blocks = sms * BLOCKS_PER_SM
    warps_per_block = THREADS // 32

    def launch(case, rec):
        mmas, fill, kind = case
        f((blocks,), (THREADS,), (np.int64(RUN_NS), np.int32(mmas), np.int32(fill), np.int32(kind), np.uint32(12345),
                                  sink, rec))

    # every warp of a block issues what its thread 0's warp issued
    return run_cases(Path(a.out), "clock_duty", CASES, blocks, launch,
                     lambda r, cycles: r[:, 4] * warps_per_block * FLOP_PER_MMA * BLOCKS_PER_SM / cycles, "mmas",
                     "mma_flop_per_clk_per_sm")


if __name__ == "__main__":
    sys.exit(main())
