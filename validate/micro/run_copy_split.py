"""hgemm_mma_pipelined's copies and compute in different warps of one CTA: which of the two slows down when both run?
(validate/DEVIATIONS.md, hgemm_mma_pipelined: beside compute the SM takes about 15.6 cycles per cp.async, alone 8.9)

    python3 validate/micro/run_copy_split.py --out validate/measurements/h100/copysplit-2026-11-26.json [--skip-ncu]

validate/micro/copy_split.cu: one CTA of 16 warps per SM on every SM; warps 0-3 and 8-11 copy (per iteration: wait for
all but the last batch, 8 cp.async.cg of 16 B per lane from the CTA's 256 KiB window), warps 4-7 and 12-15 compute
(per iteration 4 k16 steps of 16 mma.sync m16n8k16 bf16, or 64 FFMA a step), so each sub-partition holds two of each.
Kernels: copies alone, mma alone, both; FFMA alone, with the copies. Per case the median over 5 launches (after 2) of
each role's window on each SM (its first warp's start to its last warp's end, clock64; median over SMs), in SM
cycles per iteration. With ncu (unless --skip-ncu): stall reasons and pipe activity of each kernel (both roles
together).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 2000
WARPS = 16
WINDOW = 256 * 1024  # each CTA's copies read its window again and again (33 MiB over 132 SMs: L2-resident)
RING = 64 * 1024  # dynamic shared memory the copies land in
# (kernel suffix, copiers work, computers work, what the computers run)
CASES = [("copies", True, False, "-"), ("mma", False, True, "mma"), ("copies_mma", True, True, "mma"),
         ("ffma", False, True, "ffma"), ("copies_ffma", True, True, "ffma")]
COPIERS = [w for w in range(WARPS) if (w >> 2) & 1 == 0]
COMPUTERS = [w for w in range(WARPS) if (w >> 2) & 1 == 1]
NCU_METRICS = [
    "sm__cycles_elapsed.avg",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
        "short_scoreboard", "mio_throttle", "lg_throttle", "wait", "math_pipe_throttle", "dispatch_stall",
        "not_selected", "selected", "long_scoreboard", "no_instruction", "barrier")),
]


def setup(cp):
    mod = cp.RawModule(code=(HERE / "copy_split.cu").read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))
    kernels = {}
    for name, *_rest in CASES:
        f = mod.get_function(f"copy_split_{name}")
        f.max_dynamic_shared_size_bytes = RING
        kernels[name] = f
    return kernels


def launch(cp, np, kernels, sms: int, case, src):
    """One launch: per SM, the copiers' and the computers' windows in SM cycles."""
    rec = cp.zeros(sms * 32 * 2, dtype=cp.int64)
    sink = cp.zeros(1024, dtype=cp.float32)
    kernels[case[0]]((sms,), (32 * WARPS,), (np.int32(ITERS), src, np.int64(WINDOW), sink, rec), shared_mem=RING)
    cp.cuda.runtime.deviceSynchronize()
    r = rec.get().reshape(sms, 32, 2)

    def window(warps):
        return r[:, warps, 1].max(axis=1) - r[:, warps, 0].min(axis=1)

    return window(COPIERS), window(COMPUTERS)


def child(case: int) -> None:
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    launch(cp, np, setup(cp), sms, CASES[case], cp.ones(sms * WINDOW // 4, dtype=cp.float32))


def main() -> int:
    got = common.child_or_main(__doc__.splitlines()[0], "copy_split", child)
    if got is None:
        return 0
    a, cp, np, res, sms, ncu = got
    kernels = setup(cp)
    src = cp.ones(sms * WINDOW // 4, dtype=cp.float32)
    for ci, case in enumerate(CASES):
        name, copiers, computers, compute = case
        cop, com = [], []
        for i in range(7):
            c, m = launch(cp, np, kernels, sms, case, src)
            if i >= 2:
                cop.append(float(np.median(c)))
                com.append(float(np.median(m)))
        row = {"kernel": name, "warps": WARPS, "copier_warps": COPIERS, "computer_warps": COMPUTERS,
               "iterations": ITERS, "compute": compute, "copiers_work": copiers, "computers_work": computers,
               "copiers_sm_cycles_per_iteration": statistics.median(cop) / ITERS if copiers else None,
               "computers_sm_cycles_per_iteration": statistics.median(com) / ITERS if computers else None,
               "runs_copiers_sm_cycles": cop if copiers else [], "runs_computers_sm_cycles": com if computers else []}
        common.profile_child(ncu, NCU_METRICS, f"^copy_split_{name}$", __file__, ci, [], row)
        res["results"]["copy_split"]["rows"].append(row)
        common.log(f"{name}: copiers {row['copiers_sm_cycles_per_iteration']} / computers "
                   f"{row['computers_sm_cycles_per_iteration']} SM cycles per iteration; ncu {row.get('ncu', {})}")
        common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
