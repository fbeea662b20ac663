"""How many one-wavefront shared loads a sub-partition's MIO queue holds before issue waits (the model's
``[l1] mio_queue_requests`` was measured with 8- and 32-way conflicted loads: validate/measurements/h100/
queues-2026-11-24.json; the reductions through the front-end turn on it: validate/DEVIATIONS.md "2026-12-07 e").

    python3 validate/micro/run_mioburst.py --out validate/measurements/h100/mioburst-2026-12-07.json

validate/micro/mioburst.cu: one CTA per SM, ``warps`` warps, each issuing a burst of 32 independent conflict-free
loads (predicate on, or off for every lane; or 8-way conflicted) between two clock64 reads, then adding them up (a
third read). Per case the median over 5 launches (after one warm-up) of each warp's cycles, then the median, min and
max over the warps of all SMs: to the last load's issue, and to its data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

BURST = 32
WARPS = (1, 2, 4, 8, 16, 32)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "mioburst.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    f = mod.get_function("mioburst")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"results": {"mioburst": {"burst": BURST, "rows": []}}}
    rows = res["results"]["mioburst"]["rows"]
    sink = cp.zeros(4, dtype=cp.float32)
    for on, stride in ((1, 1), (0, 1), (1, 8)):
        for warps in WARPS:
            out = cp.zeros(sms * 32 * 2, dtype=cp.int64)
            def launch(warps=warps, on=on, stride=stride, out=out):
                f((sms,), (warps * 32,), (np.int32(warps), np.int32(32 if on else 0), np.int32(stride), sink, out))
                cp.cuda.runtime.deviceSynchronize()

            # per SM, warp, (issued, returned)
            cyc = common.median_of_launches(np, launch, lambda w=warps, o=out: o.get().reshape(sms, 32, 2)[:, :w, :])
            by_warp = np.median(cyc, axis=0)  # per warp position: its sub-partition is warp % 4
            row = {"lanes_on": bool(on), "stride_words": stride, "warps": warps,
                   "issue_cycles": {"median": float(np.median(cyc[..., 0])), "min": float(cyc[..., 0].min()),
                                    "max": float(cyc[..., 0].max())},
                   "data_cycles": {"median": float(np.median(cyc[..., 1])), "min": float(cyc[..., 1].min()),
                                   "max": float(cyc[..., 1].max())},
                   "issue_cycles_by_warp": [float(x) for x in by_warp[:, 0]],
                   "data_cycles_by_warp": [float(x) for x in by_warp[:, 1]]}
            rows.append(row)
            common.log(f"on={on} stride={stride} warps={warps}: issue {row['issue_cycles']} "
                       f"data {row['data_cycles']}; by warp {[int(x) for x in row['issue_cycles_by_warp']]}")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
