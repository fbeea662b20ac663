"""What gpusim predicts for run_copy_split.py's kernels, beside what the H100 measured (offline, no GPU).

    python validate/micro/predict_copy_split.py [--config configs/h100_sxm.toml]

Each kernel is written in the IR with warp roles: the copiers' 8 cp.async (global load and asynchronous shared
store) and their address arithmetic (54 INT32 instructions an iteration, as the SASS has: `gpusim sass
validate/micro/copy_split.cu`), the computers' mma.sync or FFMA bundles. Every iteration is simulated (no loop
fast-forward), and each role's time is its warps' last span on the traced SM. Prints SM cycles per iteration.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gpusim import engine
from gpusim.authoring import Commit, Compute, Kernel, Launch, Loop, Mem, Tensor, WaitGroup
from gpusim.chip import simulate
from gpusim.config import load_config

MEASURED = Path(__file__).resolve().parents[1] / "measurements" / "h100" / "copysplit-2026-11-26.json"
ITERS = 100
WARPS = 16
WINDOW = 256 * 1024
COPIERS = tuple(w for w in range(WARPS) if (w >> 2) & 1 == 0)
COMPUTERS = tuple(w for w in range(WARPS) if (w >> 2) & 1 == 1)


def twin(row: dict) -> Kernel:
    body = []
    if row["copiers_work"]:
        body += [WaitGroup("cp.async", 1, warps=COPIERS),
                 Mem("cp", "global", "ld", 16, lambda c: c.bx * WINDOW + ((c.it * WARPS + c.warp) * 4096 + c.r * 512
                                                                           + c.lane * 16) % WINDOW,
                     "x", repeat=8, group="cp.async", warps=COPIERS),
                 Mem("cp_st", "shared", "st", 16, lambda c: 4096 + ((c.warp * 8 + c.r) * 512 + c.lane * 16) % 65536,
                     repeat=8, after=("cp",), async_copy=True, group="cp.async", warps=COPIERS),
                 Commit("cp.async", warps=COPIERS),
                 Compute("addr", "int32", 54, ilp=2, warps=COPIERS)]
    if row["computers_work"]:
        step = (Compute("mma", "tensor", 16, ilp=16, warps=COMPUTERS) if row["compute"] == "mma"
                else Compute("ffma", "fp32", 64, ilp=16, warps=COMPUTERS))
        body.append(Loop(4, (step,), var="j"))
    return Kernel(f"copy_split_{row['kernel']}", (WARPS,), Launch((132, 1, 1), (32 * WARPS, 1, 1), 128, 4096 + 65536),
                  tensors=(Tensor("x", 132 * WINDOW),), loop=Loop(ITERS, tuple(body)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=None)
    cfg = load_config(ap.parse_args().config)
    engine.ChipModel._steady = staticmethod(lambda *a, **k: False)  # every iteration simulated
    engine.MAX_LOOP_ITERATIONS = ITERS
    rows = json.loads(MEASURED.read_text())["results"]["copy_split"]["rows"]
    print(f"{'kernel':<12} {'copiers pred':>12} {'meas':>7} {'computers pred':>15} {'meas':>7}")
    for row in rows:
        sim = simulate(twin(row), cfg, trace=True)
        ends: dict[int, float] = {}
        for tid, _name, _cat, _t0, t1 in sim.result.trace:
            ends[tid % WARPS] = max(ends.get(tid % WARPS, 0.0), t1)

        print(f"{row['kernel']:<12} {_cell(ends, row['copiers_work'], COPIERS, row['copiers_sm_cycles_per_iteration'])}"
              f"    {_cell(ends, row['computers_work'], COMPUTERS, row['computers_sm_cycles_per_iteration'])}")


def _cell(ends: dict[int, float], work: bool, warps: tuple[int, ...], measured) -> str:
    if not work:
        return f"{'-':>12} {'-':>7}"
    return f"{max(ends[w] for w in warps) / ITERS:>12.1f} {measured:>7.1f}"


if __name__ == "__main__":
    main()
