"""L2 read rate by sectors and lines (issue "memory system at chip scale": what a scattered read costs the L2).

    python3 validate/micro/run_l2_sectors.py --out validate/measurements/h100/l2sectors-2026-11-24.json

validate/micro/l2_sectors.cu on an 8 MiB (L2-resident) buffer, 4 CTAs of 512 threads per SM, 256 loads of 4 B per
thread (ld.global.cg): lane stride 1, 8 or 32 words (4, 32, 32 sectors per request in 1, 8, 32 lines). CUDA events
around one launch after a warm-up, median of 5; sectors and lines per SM clock (clock from a spin kernel).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

REPS = 256


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    sms = res["gpu"]["sm_count"]
    k = cp.RawModule(code=(HERE / "l2_sectors.cu").read_text(), options=("-std=c++17",)).get_function("l2_sectors")
    buf = cp.ones((8 << 20) // 4, dtype=cp.float32)
    sink = cp.zeros(512, dtype=cp.float32)
    grid, block = sms * 4, 512
    rows = []
    for stride, sectors, lines in ((1, 4, 1), (8, 32, 8), (32, 32, 32)):
        def go(stride=stride):
            k((grid,), (block,), (buf, np.int64(buf.size), np.int32(stride), np.int32(REPS), sink))
        t = statistics.median(common.event_times_ns(cp, go))
        requests = grid * block // 32 * REPS
        clk = 1.98e9
        rows.append({"stride_words": stride, "sectors_per_request": sectors, "lines_per_request": lines,
                     "time_ns": t, "requests": requests,
                     "sectors_per_clk_at_1.98GHz": requests * sectors / (t * 1e-9 * clk),
                     "lines_per_clk_at_1.98GHz": requests * lines / (t * 1e-9 * clk)})
        common.log(f"stride {stride}: {t / 1e3:.1f} us, {rows[-1]['sectors_per_clk_at_1.98GHz']:.1f} sectors/clk, "
                   f"{rows[-1]['lines_per_clk_at_1.98GHz']:.1f} lines/clk")
    res["results"]["l2_sectors"] = {"rows": rows, "what": "L2-resident 4-B loads, ld.global.cg, by lane stride"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
