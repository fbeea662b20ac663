"""Issued instructions of an arrival on a cluster partner's mbarrier (remote_arrive.cu), counted by ncu.

    python3 validate/micro/run_remote_arrive.py --out validate/measurements/h100/remotearrive-2026-12-07.json

132 clusters of two 32-thread CTAs; thread 0 of each arrives N = 0, 64 or 1024 times on the partner's mbarrier
(remote) or on its own (local). ncu (a child process per case, --clock-control none) gives smsp__inst_executed.sum;
the issues an arrival takes are the slope in N of the count per CTA, against the loop's SASS (4 instructions a trip:
the arrive, the counter, the compare, the branch).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

CTAS = 264
NS = (0, 64, 1024)
METRICS = "smsp__inst_executed.sum,gpu__time_duration.sum"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", nargs=2, type=int, metavar=("N", "REMOTE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "remote_arrive.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    f = mod.get_function("remote_arrive")
    sink = cp.zeros(4, dtype=cp.uint32)
    if a.child:
        n, remote = a.child
        for _ in range(2):  # a warm-up, then the profiled launch
            f((CTAS,), (32,), (np.int32(n), np.int32(remote), sink))
            cp.cuda.runtime.deviceSynchronize()
        return 0
    ncu = common.find_ncu()
    res = common.cupy_header(cp, "micro-1") | {"results": {"remote_arrive": {"ctas": CTAS, "rows": []}}}
    rows = res["results"]["remote_arrive"]["rows"]
    for remote in (1, 0):
        for n in NS:
            cmd = [ncu, "--clock-control", "none", "--launch-skip", "1", "--launch-count", "1", "--csv",
                   "--metrics", METRICS, *common.python_cmd(), str(Path(__file__).resolve()), "--out", "-",
                   "--child", str(n), str(remote)]
            rc, text = common.sh(cmd, timeout=300)
            vals = {}
            lines = [ln for ln in text.splitlines() if ln.startswith('"')]
            for r in csv.DictReader(io.StringIO("\n".join(lines))):
                try:
                    vals[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
                except (KeyError, ValueError):
                    pass
            row = {"remote": bool(remote), "n": n, "rc": rc, **vals,
                   "inst_per_cta": vals.get("smsp__inst_executed.sum", float("nan")) / CTAS}
            rows.append(row)
            common.log(f"remote={remote} n={n}: {row}")
            if rc and not vals:
                row["log"] = text[-3000:]
    for remote in (True, False):
        r = {x["n"]: x["inst_per_cta"] for x in rows if x["remote"] == remote}
        if all(n in r for n in NS):
            slope = (r[NS[-1]] - r[NS[1]]) / (NS[-1] - NS[1])
            res["results"]["remote_arrive"][f"issues_per_trip_{'remote' if remote else 'local'}"] = slope
            common.log(f"{'remote' if remote else 'local'}: {slope:.2f} issues a trip of the loop")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
