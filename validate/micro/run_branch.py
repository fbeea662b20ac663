"""What a warp pays for its branches beyond their issues (branch.cu): the switch_ops miss (-18.9%, ncu's
branch_resolving 2.8 cycles an issue where the model has none).

    python3 validate/micro/run_branch.py --out validate/measurements/h100/branch-2026-12-08.json

One CTA of 1024 threads per SM, of which the first 1, 8 or 32 warps run 4096 trips of a switch (branch.cu): br_ways on
lane % ways, loop-invariant, which ptxas compiles to a jump table (LDC from constant bank 2, BRX, inside a BSSY region:
ways 1 uniform, 2-32 the warp's lanes sent to that many of the 8 cases), or (ways 0) on the trip count, a tree of
compares and branches, uniform, another case each trip; br_tree on (lane % ways + trip) & 7, a tree whose branches
diverge when ways > 1 (the switch_ops kernel's kind); br_none the same chain of 5 ops a trip without the switch.
Cycles a trip: median over the warps and over the last three of four launches. Compare with
`gpusim run validate/micro/branch.cu --kernel br_ways ...` at two trip counts (its cycles a trip: the difference).
Then under ncu (--clock-control none) one launch of each of NCU_CASES: the stall reasons per issue and the
instructions, to tell the branch's own wait (branch_resolving) from the rest.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 4096
WARPS = (1, 8, 32)
WAYS = (0, 1, 2, 4, 8, 32)
TREE_WAYS = (1, 2, 4, 8)
NCU_CASES = [("br_none", 1, 0), ("br_ways", 1, 0), ("br_ways", 1, 1), ("br_ways", 1, 2), ("br_ways", 1, 8),
             ("br_ways", 32, 1), ("br_ways", 32, 8), ("br_tree", 1, 1), ("br_tree", 1, 2), ("br_tree", 1, 8),
             ("br_tree", 32, 8)]
STALLS = ("branch_resolving", "no_instruction", "wait", "short_scoreboard", "long_scoreboard", "selected",
          "not_selected", "math_pipe_throttle", "dispatch_stall", "barrier", "misc")


def child() -> None:
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "branch.cu").read_text(), options=("-std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for name, warps, ways in NCU_CASES:
        cyc = cp.zeros(sms * 32, dtype=cp.int64)
        sink = cp.zeros(sms, dtype=cp.uint32)
        mod.get_function(name)((sms,), (1024,), (np.int32(ways), np.int32(ITERS), np.int32(warps), cyc, sink))
        cp.cuda.runtime.deviceSynchronize()


def main() -> int:
    a = common.out_or_child(child)
    if a is None:
        return 0
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "branch.cu").read_text(), options=("-std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    res = common.cupy_header(cp, "micro-1") | {"method": __doc__.strip().splitlines()[3:], "iters": ITERS,
                                                "results": []}
    for name in ("br_none", "br_ways", "br_tree"):
        f = mod.get_function(name)
        ways = {"br_none": (0,), "br_ways": WAYS, "br_tree": TREE_WAYS}[name]
        cases = [(w, k) for w in WARPS for k in ways]
        for warps, ways, per, runs, ok in common.warp_clock_rows(cp, np, f, sms, 1, cases, ITERS, 1,
                                                                 lambda w, k, s: bool(s.any())):
            res["results"].append({"kernel": name, "warps": warps, "ways": ways, "cycles_per_trip": per,
                                   "per_launch": runs, "ok": ok})
            common.log(f"{name} warps {warps} ways {ways}: {per:.1f} cycles a trip")
    ncu = common.find_ncu()
    if ncu:
        metrics = ["smsp__inst_executed.sum", "smsp__cycles_active.avg", "gpu__time_duration.sum",
                   *[f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio" for s in STALLS]]
        rows, _, _, dropped, _log = common.run_ncu(ncu, metrics, "br_", [*common.python_cmd(), __file__, "--child"],
                                                   Path(a.out).parent / "branch", timeout=300)
        res["ncu"] = []
        for (name, warps, ways), row in zip(NCU_CASES, rows, strict=False):
            vals = common.metric_values(row, metrics)
            res["ncu"].append({"kernel": name, "warps": warps, "ways": ways, **vals})
            common.log(f"ncu {name} warps {warps} ways {ways}: " + ", ".join(
                f"{s} {vals.get(f'smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio')}" for s in STALLS[:4]))
        res["ncu_missing"] = dropped
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
