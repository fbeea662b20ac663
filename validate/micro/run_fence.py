"""What a memory fence (__threadfence: MEMBAR.SC.GPU, and CGAERRBAR on sm_90) costs a warp, alone and with the chip
busy, after a store or with nothing outstanding.

    python3 validate/micro/run_fence.py --out validate/measurements/h200/fence-2026-11-28.json

validate/micro/fence.cu: `rounds` iterations of a store (each thread its own word), a fence, or a store and a fence;
clock64 around each warp's loop (cycles per iteration: the difference between 64 and 16 rounds over 48, so the launch
and the loop's entry cancel), and CUDA events around the launch (ns per round for the chip, median of 7). Launches:
one warp alone on the chip; 1056 CTAs of 256 threads (8 per SM) with thread 0 of each taking part (a threadfence
reduction's last-block test) or all of them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ROUNDS = (16, 64)
LAUNCHES = (  # (name, grid, block, active threads per CTA)
    ("one_warp", 1, 32, 32),
    ("chip_thread0", 1056, 256, 1),
    ("chip_all", 1056, 256, 256),
)
MODES = {1: "store", 2: "fence", 3: "store+fence"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    data = common.cupy_header(cp, "fence-1")
    data["how"] = __doc__
    mod = cp.RawModule(code=(HERE / "fence.cu").read_text(), options=("-std=c++17",))
    fn = mod.get_function("fence_loop")
    x = cp.zeros(1056 * 256, dtype=cp.uint32)
    cyc = cp.zeros(1056 * 8, dtype=cp.int64)
    rows = []
    for name, grid, block, active in LAUNCHES:
        for mode, what in MODES.items():
            row = {"launch": name, "grid": grid, "block": block, "active_threads": active, "mode": what}
            per = {}
            for rounds in ROUNDS:
                def launch(rounds=rounds, grid=grid, block=block, mode=mode, active=active):
                    fn((grid,), (block,), (x, cyc, np.int32(mode), np.int32(active), np.int32(rounds)))
                times = common.event_times_ns(cp, launch, n=7)
                launch()
                cp.cuda.runtime.deviceSynchronize()
                warps = grid * block // 32
                c = cp.asnumpy(cyc[:warps]).astype(np.float64)
                busy = c if active >= 32 else c[:: block // 32]  # the warps with a thread taking part
                per[rounds] = {"event_ns_median": statistics.median(times),
                               "warp_cycles_median": float(np.median(busy)), "warp_cycles_max": float(busy.max())}
            lo, hi = per[ROUNDS[0]], per[ROUNDS[1]]
            n = ROUNDS[1] - ROUNDS[0]
            row["cycles_per_iteration_warp"] = (hi["warp_cycles_median"] - lo["warp_cycles_median"]) / n
            row["ns_per_round_chip"] = (hi["event_ns_median"] - lo["event_ns_median"]) / n
            row["raw"] = {str(k): v for k, v in per.items()}
            rows.append(row)
            common.log(f"{name} {what}: {row['cycles_per_iteration_warp']:.1f} cycles an iteration a warp, "
                       f"{row['ns_per_round_chip']:.1f} ns a round for the chip")
    data["cases"] = rows
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
