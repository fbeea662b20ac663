"""The SM clock against tensor activity, mma.sync and wgmma (issue "the SM side": clocks per pipe mix).

    python3 validate/micro/run_clock_duty.py --out validate/measurements/h100/clockduty-2026-11-24.json

validate/micro/clock_duty.cu keeps every SM running tensor bursts (mma.sync: 4 CTAs of 256 threads per SM, 256
mma.sync m16n8k16 bf16 per warp per burst; wgmma: one warpgroup per SM, 8 wgmma m64n256k16 bf16 per burst) with
`gap` cycles of idle spinning between bursts, for 200 ms each. Per block: the clock d(clock64) / d(%globaltimer)
and the tensor activity, the bursts' FLOP per cycle per SM over the dense peak of 4096 FLOP/clk/SM. Medians over
the blocks. Each point runs twice and the second run counts (the clock follows power with a lag).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

RUN_NS = 200_000_000
GAPS = (0, 250, 1000, 2500, 6000, 15000, 40000)
PEAK_FLOP_PER_CLK_PER_SM = 4096
HMMA_CTAS_PER_SM = 4
HMMA_BURST_FLOP_PER_WARP = 64 * 4 * 16 * 8 * 16 * 2
WGMMA_BURST_FLOP = 8 * 64 * 256 * 16 * 2


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--dry", action="store_true", help="print the plan only")
    a = ap.parse_args()
    if a.dry:
        for kind in ("hmma", "wgmma"):
            for gap in GAPS:
                print(kind, gap)
        return 0
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {"rows": []}}
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    mod = cp.RawModule(code=(HERE / "clock_duty.cu").read_text(),
                       options=("-std=c++17", "--gpu-architecture=sm_90a", f"-I{HERE.parent / 'kernels'}"))
    sink = cp.zeros(4, dtype=cp.float32)

    def launch(kind, gap, blocks, rec):
        if kind == "hmma":
            mod.get_function("cd_hmma")((blocks,), (256,), (np.int64(RUN_NS), np.int64(gap), np.uint32(7), sink, rec))
        else:
            mod.get_function("cd_wgmma")((blocks,), (128,), (np.int64(RUN_NS), np.int64(gap), sink, rec),
                                         shared_mem=44 * 1024)  # A 8 KiB + B 32 KiB (128B swizzle) + alignment
        cp.cuda.runtime.deviceSynchronize()
    for kind in ("hmma", "wgmma"):
        blocks = sms * (HMMA_CTAS_PER_SM if kind == "hmma" else 1)
        rec = cp.zeros(blocks * 5, dtype=cp.int64)
        for gap in GAPS:
            for _ in range(2):  # the clock follows power with a lag: the first run settles it, the second counts
                rec.fill(0)
                launch(kind, gap, blocks, rec)
            # rec[4]: bursts of the block's warps (mma.sync) or of its warpgroup (wgmma); 4 mma.sync blocks per SM
            flop = HMMA_BURST_FLOP_PER_WARP * HMMA_CTAS_PER_SM if kind == "hmma" else WGMMA_BURST_FLOP
            r = rec.get().reshape(-1, 5)
            cyc, ns = r[:, 1] - r[:, 0], r[:, 3] - r[:, 2]
            mhz = cyc / ns * 1e3
            activity = r[:, 4] * flop / cyc / PEAK_FLOP_PER_CLK_PER_SM
            row = {"kind": kind, "gap_cycles": gap, "clock_mhz": float(np.median(mhz)),
                   "clock_mhz_min": float(mhz.min()), "clock_mhz_max": float(mhz.max()),
                   "tensor_activity": float(np.median(activity)), "blocks": int(blocks)}
            res["results"]["rows"].append(row)
            common.log(f"{kind:5s} gap {gap:6d}: {row['clock_mhz']:7.1f} MHz at tensor activity "
                       f"{row['tensor_activity']:.3f}")
    res["results"]["what"] = ("SM clock (MHz) against tensor activity (FLOP per cycle per SM over 4096), tensor "
                              "bursts separated by idle spins, 200 ms per point")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
