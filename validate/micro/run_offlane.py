"""What a shared-memory instruction with every lane predicated off costs the L1TEX data pipe (the conflicted-shared
family: block_scan and mem_reduce_interleaved 25% fast in the front-end; ncu counts a wavefront for each such
instruction, validate/measurements/h100/diagnostics/sharedpipe-2026-12-07-ncu-*.csv).

    python3 validate/micro/run_offlane.py --out validate/measurements/h100/offlane-2026-12-07.json [--ncu]

validate/micro/offlane.cu: one CTA per SM, ``warps`` warps; ``on`` warps issue 8 independent conflict-free shared loads
(or stores) a loop iteration with their predicate on, ``off`` warps the same with it off for every lane, the rest
skip the loop. Per case: the median over 5 launches of each warp's clock64 cycles over its loop, as cycles per
instruction of the on warps and of the off warps, and the SM's instructions per cycle (all warps' instructions over
the slowest warp's cycles). With --ncu: the shared wavefronts ncu counts for a few cases.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 2048
PER_ITER = {0: 8, 1: 4}  # shared instructions a loop iteration: loads, stores
# (warps, on warps, off warps)
CASES = [(w, w, 0) for w in (1, 4, 8, 16, 32)] + [(w, 0, w) for w in (1, 4, 8, 16, 32)] + \
        [(w, w // 2, 0) for w in (8, 16, 32)] + [(w, w // 2, w // 2) for w in (8, 16, 32)] + \
        [(32, 4, 28), (32, 4, 0), (16, 2, 14), (16, 2, 0)]
NCU_CASES = [(16, 0, 16), (16, 8, 8), (16, 16, 0)]
NCU_METRICS = ("gpu__time_duration.sum,sm__cycles_elapsed.avg,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,"
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,"
               "smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,"
               "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,"
               "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,"
               "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,"
               "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio")


def launch(cp, np, f, sms, warps, on, off, store, iters=ITERS):
    sink = cp.zeros(4, dtype=cp.float32)
    out = cp.zeros(sms * warps, dtype=cp.int64)
    f((sms,), (warps * 32,), (np.int32(on), np.int32(on + off), np.int32(iters), np.int32(store), sink, out))
    cp.cuda.runtime.deviceSynchronize()
    return out.get().reshape(sms, warps)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ncu", action="store_true", help="also count the wavefronts with ncu (a child process each)")
    ap.add_argument("--child", nargs=4, type=int, metavar=("WARPS", "ON", "OFF", "STORE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "offlane.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    f = mod.get_function("offlane")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    if a.child:  # one launch to profile, after a warm-up
        w, on, off, store = a.child
        launch(cp, np, f, sms, w, on, off, store)
        launch(cp, np, f, sms, w, on, off, store)
        return 0
    res = common.cupy_header(cp, "micro-1") | {"results": {"offlane": {"iters": ITERS, "per_iter": {"ld": 8, "st": 4},
                                                                        "rows": []}}}
    rows = res["results"]["offlane"]["rows"]
    for store in (0, 1):
        for warps, on, off in CASES:
            runs = [launch(cp, np, f, sms, warps, on, off, store) for _ in range(5)]
            n = ITERS * PER_ITER[store]
            cyc = np.median(np.stack(runs), axis=0)  # per SM and warp
            row = {"op": "st" if store else "ld", "warps": warps, "on_warps": on, "off_warps": off,
                   "on_cycles_per_instruction": float(np.median(cyc[:, :on])) / n if on else None,
                   "off_cycles_per_instruction": float(np.median(cyc[:, on:on + off])) / n if off else None,
                   "sm_instructions_per_cycle": (on + off) * n / float(np.median(cyc[:, :on + off].max(axis=1)))}
            rows.append(row)
            common.log(f"{row}")
    if a.ncu:
        ncu = common.find_ncu()
        res["results"]["offlane"]["ncu"] = {}
        for store in (0, 1):
            for warps, on, off in NCU_CASES:
                cmd = [ncu, "--clock-control", "none", "--launch-skip", "1", "--launch-count", "1", "--csv",
                       "--metrics", NCU_METRICS, *common.python_cmd(), str(Path(__file__).resolve()), "--out", "-",
                       "--child", str(warps), str(on), str(off), str(store)]
                rc, text = common.sh(cmd, timeout=300)
                key = f"{'st' if store else 'ld'}_{warps}_{on}_{off}"
                res["results"]["offlane"]["ncu"][key] = {"rc": rc, "csv": text[-6000:]}
                common.log(f"ncu {key} rc={rc}")
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
