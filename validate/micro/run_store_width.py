"""Store throughput against access width on the H100 (issue "memory system at chip scale", item 3).

    python3 validate/micro/run_store_width.py --out validate/measurements/h100/storewidth-2026-11-24.json

validate/micro/storewidth.cu compiled for W = 1, 2, 4, 8, 16 bytes per lane: coalesced warp stores (32 x W
contiguous bytes each) over a 1 GiB buffer (to HBM) and, 64 passes, over an 8 MiB buffer (L2-resident); CUDA
events around one launch after a warm-up, median of 5; bytes per second and warp stores per SM cycle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    src = (HERE / "storewidth.cu").read_text()
    big = cp.zeros(1 << 30, dtype=cp.uint8)
    small = cp.zeros(8 << 20, dtype=cp.uint8)
    rows = []
    for w in (1, 2, 4, 8, 16):
        k = cp.RawModule(code=src, options=("-std=c++17", f"-DW={w}")).get_function("store_width")
        for label, buf, reps in (("hbm_1GiB", big, 1), ("l2_8MiB", small, 64)):
            n = buf.size // w
            grid, block = sms * 8, 256

            def go(buf=buf, n=n, reps=reps, k=k, grid=grid, block=block):
                k((grid,), (block,), (buf, np.int64(n), np.int32(reps)))
            t = statistics.median(common.event_times_ns(cp, go))
            nbytes = buf.size * reps
            rows.append({"width_bytes": w, "buffer": label, "time_ns": t, "bytes_per_s": nbytes / (t * 1e-9),
                         "warp_stores_per_ns": n * reps / 32 / t})
            common.log(f"W={w} {label}: {nbytes / t:.0f} GB/s")
    res["results"]["store_width"] = {"what": "coalesced warp stores of W bytes per lane", "rows": rows,
                                     "unit": "bytes per second"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
