"""How fast a design-space sweep runs: a grid of FP32-ladder points with 1 and 2 local worker processes, and on
a Dask ``LocalCluster`` with 1 and 2 worker processes (no cache: every point is simulated or rejected).

Goal (issue 13): 1,000 points of the FP32 ladder in under 5 minutes on the 2-core machine, and near-linear
speed-up with workers on a LocalCluster. Prints the figures; asserts nothing.

The default grid: sgemm_2d_blocktiling, sgemm_vectorized and sgemm_autotuned at 512^3, BM and BN in
{32, 64, 128, 256}, BK in {8, 16, 32}, TM and TN in {4, 8, 16}: 1,296 points, of which the first ``--points``
(default 1,000) run. Many tile combinations cannot be built (thread counts, divisibility, vector widths) and
are rejected in milliseconds with their reason; the figures below say how many were simulated.

    python benchmarks/bench_sweep.py [--points 1000] [--shape 512,512,512] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import time

from gpusim import sweep

KERNELS = ["sgemm_2d_blocktiling", "sgemm_vectorized", "sgemm_autotuned"]
VARY = ["BM=32,64,128,256", "BN=32,64,128,256", "BK=8,16,32", "TM=4,8,16", "TN=4,8,16"]


def timed(label: str, plan: sweep.Plan, **how) -> tuple[float, list]:
    t0 = time.perf_counter()
    out = sweep.run(plan, cache=sweep.Cache(None), **how)
    dt = time.perf_counter() - t0
    n = len(plan.points)
    print(f"{label:<28} {n:>6} points in {dt:7.1f} s  {n / dt:6.2f} points/s", flush=True)
    return dt, out.results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--shape", default="512,512,512")
    ap.add_argument("--skip-cluster", action="store_true", help="local worker processes only")
    a = ap.parse_args()
    plan = sweep.plan(KERNELS, [sweep.parse_shape(a.shape)], sweep.parse_vary(VARY), max_points=100_000)
    plan.points = plan.points[:a.points]
    print(f"grid: {', '.join(KERNELS)} at {a.shape}; {' '.join(VARY)}; first {len(plan.points)} points")
    t1, results = timed("local, 1 worker", plan, workers=1)
    simulated = sum("metrics" in r for r in results)
    print(f"  {simulated} points simulated, {len(results) - simulated} rejected with a reason (cannot launch)")
    t2, again = timed("local, 2 workers", plan, workers=2)
    print(f"  speed-up {t1 / t2:.2f}x; same results: {again == results}")
    if a.skip_cluster:
        return
    try:
        from distributed import LocalCluster
    except ImportError:
        print("no dask: pip install 'gpusim[cluster]' for the LocalCluster figures")
        return
    times = {}
    for n in (1, 2):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
            times[n], res = timed(f"LocalCluster, {n} worker(s)", plan, scheduler=lc.scheduler_address)
            print(f"  same results as local: {res == results}")
    print(f"  LocalCluster speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x")


if __name__ == "__main__":
    main()
