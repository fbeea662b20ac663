"""The simulated timeline of one SM as Chrome trace events (opens in Perfetto / chrome://tracing)."""

from __future__ import annotations

import json

from gpusim.chip import Simulation


def chrome_trace(sim: Simulation) -> dict:
    """Trace of the first CTA on the first simulated SM: one track per warp, one slice per operation or stall."""
    res = sim.result
    clock = sim.config.chip.sm_clock_hz
    wpc = -(-sim.kernel.launch.threads_per_block // sim.config.sm.warp_size_threads)
    events = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": f"SM 0: {sim.kernel.name}"}}]
    for w in sorted({e[0] for e in res.trace}):
        events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": w,
                       "args": {"name": f"CTA {w // wpc} warp {w % wpc} (SMSP {w % sim.config.sm.subpartitions})"}})
    for w, name, cat, t0, t1 in res.trace:
        events.append({"name": name, "cat": cat, "ph": "X", "pid": 0, "tid": w,
                       "ts": round(t0 / clock * 1e6, 6), "dur": round((t1 - t0) / clock * 1e6, 6),
                       "args": {"start_cycle": round(t0, 1), "cycles": round(t1 - t0, 1)}})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"kernel": sim.kernel.name, "shape": list(sim.kernel.shape),
                          "simulated_iterations": res.simulated_iterations,
                          "fast_forward": res.fast_forward,
                          "note": "the first CTA of one SM; loop iterations beyond the simulated ones are "
                                  "extrapolated and not shown"}}


def write_trace(sim: Simulation, path: str) -> None:
    with open(path, "w") as f:
        json.dump(chrome_trace(sim), f, separators=(",", ":"))
