"""How fast a design-space sweep runs: a 1,000-point grid of FP32-ladder points with 1 and 2 local worker
processes, and on a Dask ``LocalCluster`` with 1 and 2 worker processes (no cache: every point is computed).

Goal (issue 13): 1,000 points of the FP32 ladder in under 5 minutes on the 2-core machine, and near-linear
speed-up with workers on a LocalCluster. Prints each figure beside the goal (1,000 points at the measured rate);
asserts nothing.

Grids (``--grid``):

- ``dense`` (default, 1,024 points, ~70% simulated): sgemm_2d_blocktiling and sgemm_autotuned, BM, BN in
  {64, 128}, BK in {8, 16}, TM, TN in {4, 8}, at 16 shapes M, N in {256, 512, 768, 1024} x K=512;
- ``wide`` (1,296 points, the first ``--points`` run): sgemm_2d_blocktiling, sgemm_vectorized and sgemm_autotuned
  at 512^3 with BM, BN in {32..256}, BK in {8, 16, 32}, TM, TN in {4, 8, 16}: most tile combinations cannot be
  built (thread counts, divisibility, vector widths) and are rejected in milliseconds with their reason.

    python benchmarks/bench_sweep.py [--grid dense|wide] [--points 1000] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import time

from gpusim import sweep

GOAL_1000_S = 300.0  # issue 13: 1,000 points in under 5 minutes on 2 cores

GRIDS = {
    "dense": (["sgemm_2d_blocktiling", "sgemm_autotuned"],
              [(m, n, 512) for m in (256, 512, 768, 1024) for n in (256, 512, 768, 1024)],
              ["BM=64,128", "BN=64,128", "BK=8,16", "TM=4,8", "TN=4,8"]),
    "wide": (["sgemm_2d_blocktiling", "sgemm_vectorized", "sgemm_autotuned"], [(512, 512, 512)],
             ["BM=32,64,128,256", "BN=32,64,128,256", "BK=8,16,32", "TM=4,8,16", "TN=4,8,16"]),
}


def timed(label: str, plan: sweep.Plan, **how) -> tuple[float, list]:
    t0 = time.perf_counter()
    out = sweep.run(plan, cache=sweep.Cache(None), **how)
    dt = time.perf_counter() - t0
    n = len(plan.points)
    per_1000 = 1000 * dt / n
    print(f"{label:<28} {n:>6} points in {dt:7.1f} s  {n / dt:6.2f} points/s  1,000 points: {per_1000:6.1f} s "
          f"(goal < {GOAL_1000_S:g} s: {'met' if per_1000 < GOAL_1000_S else 'MISSED'})", flush=True)
    return dt, out.results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", choices=sorted(GRIDS), default="dense")
    ap.add_argument("--points", type=int, default=None, help="run only the first N points of the grid")
    ap.add_argument("--skip-cluster", action="store_true", help="local worker processes only")
    a = ap.parse_args()
    kernels, shapes, vary = GRIDS[a.grid]
    plan = sweep.plan(kernels, shapes, sweep.parse_vary(vary), max_points=100_000)
    plan.points = plan.points[:a.points]
    print(f"grid {a.grid}: {', '.join(kernels)}; {len(shapes)} shape(s) {shapes[0]}..{shapes[-1]}; {' '.join(vary)}; "
          f"{len(plan.points)} points")
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
