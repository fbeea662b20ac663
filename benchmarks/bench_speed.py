"""How fast the simulator is: the whole FP32 ladder at 4096^3, each kernel alone, and 16384^3 vs 4096^3.

Goals (issue 29, "interactive speed"): one kernel < 0.3 s, the FP32 ladder < 5 s in one process on 2 cores;
(issue "simulator core") 16384^3 no more than 2x the wall time of 4096^3. Also the start-up of `gpusim list`
(a whole process: Python, imports, the catalogue; no goal, 0.17 s a week before issue 29). Prints each figure
beside its goal; asserts nothing. The ladder is timed twice: its kernels one after another in this process (the
goal's figure), and as ``gpusim ladder`` runs them (one process per core).

    python benchmarks/bench_speed.py [--family sgemm] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import kernels_ir  # noqa: F401
from gpusim.api import predict
from gpusim.cli import ladder_rows
from gpusim.config import load_config
from gpusim.ir import REGISTRY
from user_env import user_env


GOAL_KERNEL_S = 0.3
GOAL_LADDER_S = 5.0
GOAL_BIG_RATIO = 2.0
REPO = Path(__file__).resolve().parent.parent


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="sgemm")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    cfg = load_config()
    names = [n for n, d in REGISTRY.items() if d.family == a.family]
    small, big = (4096, 4096, 4096), (16384, 16384, 16384)
    print(f"{'kernel':<26} {'4096^3 s':>9} {'goal':>5} {'16384^3 s':>10} {'ratio':>6} {'goal':>5}  status")
    total, met = 0.0, 0
    for n in names:
        t_small = best_of(lambda n=n: predict(n, small, None, cfg), a.repeat)
        t_big = best_of(lambda n=n: predict(n, big, None, cfg), a.repeat)
        total += t_small
        ok = t_small < GOAL_KERNEL_S and t_big / t_small <= GOAL_BIG_RATIO
        met += ok
        print(f"{n:<26} {t_small:>9.3f} {GOAL_KERNEL_S:>5g} {t_big:>10.3f} {t_big / t_small:>6.2f} "
              f"{GOAL_BIG_RATIO:>5g}  {verdict(ok)}")
    print(f"kernels meeting both goals: {met} of {len(names)}")
    t_ladder = best_of(lambda: [predict(n, small, None, cfg) for n in names], 1)
    print(f"\nwhole {a.family} ladder at 4096^3 in one process: {t_ladder:.2f} s (goal < {GOAL_LADDER_S:g} s on 2 "
          f"cores: {verdict(t_ladder < GOAL_LADDER_S)}; sum of best single runs {total:.2f} s)")
    t_cli = best_of(lambda: ladder_rows(a.family, small, None), 1)
    print(f"whole {a.family} ladder at 4096^3 as `gpusim ladder` runs it ({os.cpu_count()} processes): {t_cli:.2f} s")
    env = user_env()
    t_list = best_of(lambda: subprocess.run([sys.executable, "-m", "gpusim.cli", "list"], env=env, check=True,
                                            capture_output=True), a.repeat)
    print(f"start-up: `gpusim list` as a whole process {t_list:.2f} s (no goal; numba is not imported)")
    print(f"\n(this machine: {os.cpu_count()} cores; the goals are for a 2-core machine)")

if __name__ == "__main__":
    main()
