"""Does a shared load wait behind the SM's global loads, and where does a warp wait for __syncthreads on Hopper?
(lds_under_load.cu; the reductions' tree levels take 3-5x longer with 8 CTAs an SM than alone, and ncu puts their
time in short_scoreboard: validate/measurements/h100/reducelevels-2026-12-07.json.)

    python3 validate/micro/run_lds_under_load.py --out validate/measurements/h100/ldsload-2026-12-07.json
    python3 validate/micro/run_lds_under_load.py --sweep --out $OUT/ldsload-sweep-DATE.json   # next: the capacity

lds_chain: warp 0 of each CTA runs a chain of 1024 dependent shared loads (cycles a link) while the CTA's other warps
do nothing (mode 0), stream global loads that miss to HBM (1), that hit the L1 (2), or conflict-free shared loads
(3); one CTA an SM (132 CTAs of 8 warps) and eight (1056 CTAs of 8 warps). bar_defer: one CTA of 8 warps, warp 1
late by DELAY cycles at __syncthreads; warp 0's cycles from before the barrier to right after it and to the use of a
shared load after it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

MODES = {0: "alone", 1: "global misses", 2: "global L1 hits", 3: "shared loads"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sweep", action="store_true", help="also: CTAs an SM 1-8 x global misses in flight a warp 1-8 "
                    "(the capacity past which shared loads wait behind them)")
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "lds_under_load.cu").read_text(), options=("-std=c++17",))
    chain, bar = mod.get_function("lds_chain"), mod.get_function("bar_defer")
    res = common.cupy_header(cp, "micro-1") | {"method": __doc__.strip().splitlines()[3:], "results": {}}
    big = cp.zeros((1 << 30) // 16 * 4, dtype=cp.int32)  # 1 GiB of int4
    mask = np.uint64((1 << 26) - 1)
    sink = cp.zeros(4, dtype=cp.int32)
    rows = res["results"]["lds_chain"] = []
    for per_sm in (1, 8):
        ctas = 132 * per_sm
        for mode in MODES:
            out = cp.zeros(ctas, dtype=cp.uint32)
            for _ in range(2):
                chain((ctas,), (256,), (big, mask, np.int32(mode), np.int32(200), out, sink))
                cp.cuda.runtime.deviceSynchronize()
            c = out.get().astype(np.float64) / 1024
            row = {"ctas_per_sm": per_sm, "mode": mode, "others": MODES[mode],
                   "cycles_per_link_median": float(np.median(c)), "p10": float(np.percentile(c, 10)),
                   "p90": float(np.percentile(c, 90))}
            rows.append(row)
            common.log(f"{per_sm} CTA/SM, others {MODES[mode]}: {row['cycles_per_link_median']:.1f} cycles a "
                       f"shared-load link (p10 {row['p10']:.1f}, p90 {row['p90']:.1f})")
    brow = res["results"]["bar_defer"] = []
    for delay in (0, 2000, 8000):
        out = cp.zeros(4, dtype=cp.uint32)
        for _ in range(3):
            bar((1,), (256,), (np.int32(delay), out, sink))
            cp.cuda.runtime.deviceSynchronize()
        v = out.get().tolist()
        brow.append({"delay": delay, "after_barrier": v[0], "after_adds": v[1], "after_shared_load_use": v[2]})
        common.log(f"warp 1 late by {delay}: warp 0 right after the barrier {v[0]}, after the adds {v[1]}, after a "
                   f"shared load's use {v[2]} cycles")
    if a.sweep:  # where the wait begins: the misses in flight an SM (CTAs x 7 warps x loads in flight)
        srows = res["results"]["sweep"] = []
        for inflight in (1, 2, 4, 8):
            f = cp.RawModule(code=(HERE / "lds_under_load.cu").read_text(),
                             options=("-std=c++17", f"-DINFLIGHT={inflight}")).get_function("lds_chain")
            for per_sm in range(1, 9):
                ctas = 132 * per_sm
                out = cp.zeros(ctas, dtype=cp.uint32)
                for _ in range(2):
                    f((ctas,), (256,), (big, mask, np.int32(1), np.int32(1600 // inflight), out, sink))
                    cp.cuda.runtime.deviceSynchronize()
                c = out.get().astype(np.float64) / 1024
                row = {"ctas_per_sm": per_sm, "inflight_per_warp": inflight,
                       "misses_in_flight_per_sm": per_sm * 7 * inflight,
                       "cycles_per_link_median": float(np.median(c))}
                srows.append(row)
                common.log(f"sweep: {per_sm} CTA/SM, {inflight} misses in flight a warp "
                           f"({row['misses_in_flight_per_sm']} an SM): {row['cycles_per_link_median']:.1f} cycles a "
                           "link")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
