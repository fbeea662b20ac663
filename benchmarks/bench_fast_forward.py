"""Does the fast-forward change the answer? Every hand-IR validated row (the rows ``gpusim validate`` predicts)
predicted with the engine's fast-forwards (loop, persistent tile, grid) and with every iteration, tile and CTA
simulated in detail, and per row the worst relative difference over every numeric metric the report carries
(:func:`gpusim.fast_forward_check.differences`: utilizations, busy shares, the clock, time, stalls, bytes; a
difference within the metric's rounding unit counts as none).

Goal (issue 29): every fast-forward leaves every reported metric within 0.5% of the run without it. Prints each
row's worst difference and metric, the rows over the goal, and the rows whose run without fast-forward was left
out (over ``--limit-s`` seconds: the run without fast-forward simulates every iteration of every CTA); asserts
nothing.

    python benchmarks/bench_fast_forward.py [--limit-s 20] [--kernel NAME ...] [--top 3]
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

from gpusim import loader
from gpusim import validation as v
from gpusim.api import predict
from gpusim.config import load_config
from gpusim.fast_forward_check import GOAL_PCT, differences, fast_forward, flat, is_stall
from gpusim.ir import REGISTRY, KernelError


class _TooLong(Exception):
    pass


def _alarm(signum, frame):
    raise _TooLong


def measured_points(cfg) -> list[tuple[str, tuple[int, ...], dict | None]]:
    """The (kernel, shape, overrides) of every correct measured row of a registered kernel, as
    :func:`gpusim.validation.compare` predicts them, each once."""
    loader.load()
    main = v.latest_measurements(cfg.gpu_model)
    data = v.load_all([main, *v.companion_files(main)], cfg)
    points, seen = [], set()
    for e in data["kernels"]:
        if not e.get("correct") or e["kernel"] not in REGISTRY:
            continue
        overrides = {k: str(int(x) if isinstance(x, bool) else x) for k, x in (e.get("params") or {}).items()}
        if e.get("registers_per_thread"):
            overrides["regs_per_thread"] = e["registers_per_thread"]
        key = (e["kernel"], tuple(e["shape"]), tuple(sorted(overrides.items())))
        if key not in seen:
            seen.add(key)
            points.append((e["kernel"], tuple(e["shape"]), overrides or None))
    return points


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-s", type=float, default=20.0,
                    help="leave out a row whose run without fast-forward takes longer (seconds)")
    ap.add_argument("--kernel", action="append", help="only these kernels (repeatable)")
    ap.add_argument("--top", type=int, default=3, help="metrics over the goal listed per row")
    a = ap.parse_args()
    cfg = load_config()
    points = [p for p in measured_points(cfg) if not a.kernel or p[0] in a.kernel]
    signal.signal(signal.SIGALRM, _alarm)
    print(f"{'row':<58} {'ff s':>6} {'full s':>7} {'worst %':>8} {'>0.5%':>5} {'no stall':>8} {'>0.5%':>5}  "
          "worst metrics")
    worst_rows, over_rows, left_out, compared = [], [], [], 0
    worst_plain, over_plain = [], []  # the same without the stall breakdown
    total_ff = total_full = 0.0
    for name, shape, ov in points:
        label = f"{name} {','.join(map(str, shape))}" + (" " + ",".join(f"{k}={x}" for k, x in ov.items()) if ov
                                                          else "")
        try:
            t0 = time.perf_counter()
            with fast_forward(True):
                ff, sim = predict(name, shape, ov, cfg)
            t_ff = time.perf_counter() - t0
        except KernelError as e:  # a row the IR cannot describe (gpusim validate lists it as not modelled)
            print(f"{label[:58]:<58} not modelled: {e}")
            continue
        if not sim.result.fast_forward:
            print(f"{label[:58]:<58} {t_ff:>6.2f} {'-':>7} {'-':>8} {'-':>5}  no fast-forward used")
            continue
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, a.limit_s)
        try:
            with fast_forward(False):
                ref, _ = predict(name, shape, ov, cfg)
        except _TooLong:
            left_out.append(label)
            print(f"{label[:58]:<58} {t_ff:>6.2f} {'>' + str(a.limit_s):>7} {'-':>8} {'-':>5}  left out (time)")
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        t_full = time.perf_counter() - t0
        compared += 1
        total_ff += t_ff
        total_full += t_full
        d = differences(ref, ff)
        over = sorted(((x, k) for k, x in d.items() if x > GOAL_PCT), reverse=True)
        worst, key = max(((x, k) for k, x in d.items()), default=(0.0, ""))
        worst_rows.append((worst, label, key))
        if over:
            over_rows.append(label)
        plain = [(x, k) for x, k in over if not is_stall(k)]
        wp = max(((x, k) for k, x in d.items() if not is_stall(k)), default=(0.0, ""))
        worst_plain.append((wp[0], label, wp[1]))
        if plain:
            over_plain.append(label)
        fr, ff_ = flat(ref), flat(ff)
        shown = "; ".join(f"{k} {fr.get(k)} -> {ff_.get(k)}" for _, k in (plain or over)[:a.top]) or key
        print(f"{label[:58]:<58} {t_ff:>6.2f} {t_full:>7.2f} {worst:>8.2f} {len(over):>5} {wp[0]:>8.2f} "
              f"{len(plain):>5}  {shown}", flush=True)
    print(f"\nrows compared: {compared} (left out, run without fast-forward over {a.limit_s:g} s: {len(left_out)})")
    print(f"time: {total_ff:.1f} s with fast-forward, {total_full:.1f} s without, on the rows compared")
    if worst_rows:
        w = max(worst_rows)
        print(f"worst difference: {w[0]:.2f}% ({w[1]}: {w[2]})")
    print(f"rows with a metric over {GOAL_PCT}%: {len(over_rows)} of {compared} "
          f"(goal: 0) -> {'met' if not over_rows else 'MISSED'}")
    if worst_plain:
        w = max(worst_plain)
        print(f"without the stall breakdown (time, clock, utilizations, busy, bytes, counts): worst {w[0]:.2f}% "
              f"({w[1]}: {w[2]}); rows over {GOAL_PCT}%: {len(over_plain)} of {compared}")
    for label in left_out:
        print(f"left out: {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
