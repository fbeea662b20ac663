"""Whether a shared load with every lane predicated off delays the instruction that reads its result, and by how
much when the MIO queue is busy (issue "the SM side": stall reasons; the reductions' short_scoreboard).

    python3 validate/micro/run_predld.py --out validate/measurements/h100/predld-2026-11-25.json

validate/micro/predld.cu: one warp's dependent chain of 64 (predicated shared load, add, address from the sum),
clock64 around it, the predicate on or off for all lanes; with or without a warp of the same sub-partition issuing
512 32-way conflicted shared loads meanwhile. Median of 9 launches per case, cycles per link.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

LINKS = 64


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {"predld": {"rows": []}}}
    mod = cp.RawModule(code=(HERE / "predld.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    f = mod.get_function("pld_chain")
    sink = cp.zeros(4, dtype=cp.float32)
    out = cp.zeros(1, dtype=cp.int64)
    for busy in (0, 1):
        for on in (1, 0):
            cyc = []
            for _ in range(9):
                f((1,), (256,), (np.int32(on), np.uint32(0), np.int32(busy), sink, out))
                cp.cuda.runtime.deviceSynchronize()
                cyc.append(int(out.get()[0]))
            row = {"predicate_on": bool(on), "mio_busy": bool(busy), "cycles_per_link": statistics.median(cyc) / LINKS,
                   "runs_cycles": cyc}
            res["results"]["predld"]["rows"].append(row)
            common.log(f"on={on} busy={busy}: {row['cycles_per_link']:.1f} cycles per link")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
