"""How fast the simulator is: the whole FP32 ladder at 4096^3, each kernel alone, and 16384^3 vs 4096^3.

Goals (issue "simulator core"): ladder < 10 s on a 2-core machine, one kernel < 1 s, and 16384^3 no
more than 2x the wall time of 4096^3. Prints the figures; asserts nothing. The ladder is timed twice: its
kernels one after another in this process, and as ``gpusim ladder`` runs them (one process per core).

    python benchmarks/bench_speed.py [--family sgemm] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import os

import kernels_ir  # noqa: F401
from gpusim.api import predict
from gpusim.cli import ladder_rows
from gpusim.config import load_config
from gpusim.ir import REGISTRY


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
    print(f"{'kernel':<26} {'4096^3 s':>9} {'16384^3 s':>10} {'ratio':>6}")
    total = 0.0
    for n in names:
        t_small = best_of(lambda n=n: predict(n, small, None, cfg), a.repeat)
        t_big = best_of(lambda n=n: predict(n, big, None, cfg), a.repeat)
        total += t_small
        print(f"{n:<26} {t_small:>9.3f} {t_big:>10.3f} {t_big / t_small:>6.2f}")
    t_ladder = best_of(lambda: [predict(n, small, None, cfg) for n in names], 1)
    print(f"\nwhole {a.family} ladder at 4096^3: {t_ladder:.2f} s (sum of best single runs {total:.2f} s)")
    t_cli = best_of(lambda: ladder_rows(a.family, small, None), 1)
    print(f"whole {a.family} ladder at 4096^3 as `gpusim ladder` runs it ({os.cpu_count()} processes): {t_cli:.2f} s")


if __name__ == "__main__":
    main()
