"""Where a warp's burst of shared accesses waits at issue: the dispatch interval and the queue (mioburst2.cu).

    python3 validate/micro/run_mioburst2.py --out validate/measurements/h100/mioburst2-2026-12-07.json

One CTA per SM, the active warps by mask ({0}, {0,4} on one sub-partition, {0,1} on two, {0,1,2,3}, {0,4,8,12},
{0..7}), each issuing NB = 0..64 independent shared loads (lanes on, or off for every lane) or stores (on),
conflict-free or 8-way, between two clock64 reads. Per case the median over 5 launches (after a warm-up) of each warp's cycles,
then the median over the warps of all SMs. The slope in NB is the interval between a warp's issues; where it starts
is the queue's depth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

NBS = (0, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
MASKS = {"w0": 0x1, "w0,w4": 0x11, "w0,w1": 0x3, "w0-3": 0xF, "w0,4,8,12": 0x1111, "w0-7": 0xFF}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "mioburst2.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"results": {"mioburst2": {"rows": []}}}
    rows = res["results"]["mioburst2"]["rows"]
    sink = cp.zeros(4, dtype=cp.float32)
    for op, opname in ((0, "lds"), (1, "sts")):
        for on, stride in (((1, 1), (0, 1), (1, 8)) if op == 0 else ((1, 1), (1, 8))):
            for mname, mask in MASKS.items():
                warps = [w for w in range(32) if (mask >> w) & 1]
                block = 32 * (max(warps) + 1)
                line = []
                for nb in NBS:
                    f = mod.get_function(f"burst_{nb}_{op}")
                    out = cp.zeros(sms * 32, dtype=cp.int64)
                    def launch(f=f, block=block, mask=mask, on=on, stride=stride, out=out):
                        f((sms,), (block,), (np.uint32(mask), np.int32(32 if on else 0), np.int32(stride), sink, out))
                        cp.cuda.runtime.deviceSynchronize()

                    # per SM, active warp
                    cyc = common.median_of_launches(np, launch, lambda w=warps, o=out: o.get().reshape(sms, 32)[:, w])
                    row = {"op": opname, "lanes_on": bool(on), "stride_words": stride, "warps": mname, "nb": nb,
                           "issue_cycles": {"median": float(np.median(cyc)), "min": float(cyc.min()),
                                            "max": float(cyc.max())},
                           "issue_cycles_by_warp": [float(x) for x in np.median(cyc, axis=0)]}
                    rows.append(row)
                    line.append(int(row["issue_cycles"]["median"]))
                common.log(f"{opname} on={on} stride={stride} {mname}: issue by NB {dict(zip(NBS, line))}")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
