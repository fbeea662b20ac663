"""Does a fast-forward change the answer? One kernel launch predicted twice, with the engine's fast-forwards (loop,
persistent tile, grid) and with every iteration, tile and CTA simulated in detail, and every numeric metric of the
two reports compared (:func:`differences`). The goal (issue 29): every metric within :data:`GOAL_PCT` of the run
without fast-forward. ``benchmarks/bench_fast_forward.py`` runs it over the validated rows,
``tests/test_fast_forward.py`` over a few small kernels of each kind."""

from __future__ import annotations

import os
from contextlib import contextmanager

from gpusim.engine import FAST_FORWARD_ENV

GOAL_PCT = 0.5  # issue 29: every fast-forward leaves every reported metric within 0.5% of the run without it

# the resolution of each reported figure (metrics.report rounds it there): a difference of one unit of the last
# place is rounding, whatever its relative size (a 0.1-point utilization of a 2% unit)
_RESOLUTION = (
    ("smsp__average_warps_issue_stalled_", 0.001),
    ("gpusim__utilization_pct", 0.1),
    ("gpusim__sol_pct", 0.1),
    ("gpusim__stall_causes", 0.1),
    ("gpusim__tflops", 0.01),
    ("gpusim__waves", 0.001),
    ("gpu__time_duration.sum", 0.1),
    (".pct", 0.01),
)


STALL_METRICS = ("smsp__average_warps_issue_stalled_", "gpusim__stall_causes")  # the stall breakdown


def is_stall(key: str) -> bool:
    """Whether metric ``key`` (a flattened path) is part of the stall breakdown (a reason's warps per issue, or the
    share of a reason's cycles a cause holds)."""
    return key.startswith(STALL_METRICS)


def resolution(key: str) -> float:
    """The rounding unit of reported metric ``key`` (a flattened path); 1 for counts."""
    for prefix, res in _RESOLUTION:
        if key.startswith(prefix) or (prefix.startswith(".") and prefix in key):
            return res
    return 1.0


def flat(metrics: dict, prefix: str = "") -> dict[str, float]:
    """The numeric leaves of a report (nested dicts flattened to ``a/b`` keys); strings and flags left out."""
    out: dict[str, float] = {}
    for k, v in metrics.items():
        key = f"{prefix}/{k}" if prefix else str(k)
        if isinstance(v, dict):
            out |= flat(v, key)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = float(v)
    return out


def differences(ref: dict, ff: dict) -> dict[str, float]:
    """Per numeric metric of either report: the relative difference of ``ff`` from ``ref`` (the run without
    fast-forward) in percent of the larger, 0 where the two are within the metric's rounding unit; a metric one
    report lacks counts as 100%."""
    a, b = flat(ref), flat(ff)
    out = {}
    for key in sorted(a.keys() | b.keys()):
        if key not in a or key not in b:
            x, y = a.get(key, 0.0), b.get(key, 0.0)
            out[key] = 0.0 if max(abs(x), abs(y)) <= resolution(key) else 100.0
            continue
        x, y = a[key], b[key]
        d = abs(x - y)
        out[key] = 0.0 if d <= resolution(key) * (1 + 1e-9) else 100.0 * d / max(abs(x), abs(y))
    return out


@contextmanager
def fast_forward(on: bool | str):
    """Run the block with the fast-forwards on, off, or some of them (``"loop,grid"``: the engine reads
    :data:`gpusim.engine.FAST_FORWARD_ENV`)."""
    old = os.environ.get(FAST_FORWARD_ENV)
    os.environ[FAST_FORWARD_ENV] = on if isinstance(on, str) else "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ[FAST_FORWARD_ENV]
        else:
            os.environ[FAST_FORWARD_ENV] = old


def both_ways(name: str, shape: tuple[int, ...], overrides: dict | None = None, config=None,
              kinds: bool | str = True) -> tuple[dict, dict, bool]:
    """(metrics without fast-forward, metrics with the fast-forwards ``kinds``, whether the engine used one) of one
    launch."""
    from gpusim.api import predict

    with fast_forward(False):
        ref, _ = predict(name, shape, overrides, config)
    with fast_forward(kinds):
        ff, sim = predict(name, shape, overrides, config)
    return ref, ff, sim.result.fast_forward
