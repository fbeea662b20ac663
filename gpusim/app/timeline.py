"""The simulated timeline of one SM (``Simulation.full.trace``) as Gantt bars a chart can draw.

The engine records ``(warp, name, category, t0_cycles, t1_cycles)`` per operation and per stall. For a chart
the spans are grouped into a few activities a learner recognises (loads, TMA, MMA, softmax, barrier waits),
overlapping or touching spans of one activity on one row are merged, and the view is cut to the first
cycles so that the chart stays small.
"""

from __future__ import annotations

from dataclasses import dataclass

# display activity of each trace category, in legend order; a category not listed falls back on the rules
# of ``activity``
ACTIVITIES = ("global memory", "TMA", "shared memory", "MMA (tensor cores)", "softmax (SFU)", "FP32 / INT32",
              "barrier / async wait", "stall")
MAX_BARS = 3000  # bars a chart draws comfortably in a browser


def activity(category: str, name: str) -> str:
    """The activity a trace span belongs to (``category`` from the engine, ``name`` the op or stall)."""
    c = category.lower()
    if c == "stall":
        return "barrier / async wait" if name.startswith("wait:") else "stall"
    if "tma" in c:
        return "TMA"
    if c in ("tensor", "wgmma") or "mma" in c:
        return "MMA (tensor cores)"
    if c == "sfu":
        return "softmax (SFU)"
    if c in ("fp32", "int32"):
        return "FP32 / INT32"
    if "barrier" in c or "mbar" in c or "wait" in c:
        return "barrier / async wait"
    if c.startswith("global"):
        return "global memory"
    if c.startswith("shared") or "ldsm" in c or "stsm" in c:
        return "shared memory"
    return category


@dataclass(frozen=True)
class Bar:
    row: str
    order: int  # row order (top to bottom)
    activity: str
    start: float  # cycles
    end: float
    ops: str  # the operation names merged into this bar (first few)
    count: int


def row_label(warp: int, warps_per_cta: int, warpgroups: bool) -> str:
    cta, w = divmod(warp, warps_per_cta)
    if warpgroups:
        return f"CTA {cta} WG {w // 4}"
    return f"CTA {cta} warp {w}"


def bars(trace: list[tuple], warps_per_cta: int, warpgroups: bool = False, max_rows: int = 16,
         max_bars: int = MAX_BARS) -> tuple[list[Bar], float, float]:
    """Merged Gantt bars of the first ``max_rows`` rows; per warpgroup shows each warpgroup's first warp.

    Returns (bars, cycles shown, cycles simulated): when there are more than ``max_bars`` bars, only the
    bars that start before the cut are kept, so the view is the beginning of the kernel.
    """
    if not trace:
        return [], 0.0, 0.0
    end_all = max(e[4] for e in trace)
    warps = sorted({e[0] for e in trace})
    if warpgroups:
        warps = [w for w in warps if (w % warps_per_cta) % 4 == 0]
    warps = warps[:max_rows]
    order = {w: i for i, w in enumerate(warps)}
    spans: dict[tuple[int, str], list[tuple[float, float, str]]] = {}
    for w, name, cat, t0, t1 in trace:
        if w in order:
            spans.setdefault((w, activity(cat, name)), []).append((t0, t1, name))
    out: list[Bar] = []
    for (w, act), items in spans.items():
        items.sort()
        cur = None
        for t0, t1, name in items:
            if cur is not None and t0 <= cur[1]:
                cur[1] = max(cur[1], t1)
                cur[3] += 1
                if name not in cur[2] and len(cur[2]) < 3:
                    cur[2].append(name)
                continue
            if cur is not None:
                out.append(_bar(w, act, cur, warps_per_cta, warpgroups, order))
            cur = [t0, t1, [name], 1]
        out.append(_bar(w, act, cur, warps_per_cta, warpgroups, order))
    shown = end_all
    if len(out) > max_bars:
        out.sort(key=lambda b: b.start)
        shown = out[max_bars].start
        out = out[:max_bars]
    out.sort(key=lambda b: (b.order, b.start))
    return out, shown, end_all


def _bar(w, act, cur, warps_per_cta, warpgroups, order) -> Bar:
    return Bar(row_label(w, warps_per_cta, warpgroups), order[w], act, cur[0], cur[1], ", ".join(cur[2]), cur[3])


def busy_share(trace: list[tuple], warps_per_cta: int) -> dict[str, float]:
    """Per activity, the share of all warps' simulated time spent in it (overlaps of one activity merged)."""
    if not trace:
        return {}
    end_all = max(e[4] for e in trace)
    per: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for w, name, cat, t0, t1 in trace:
        per.setdefault((w, activity(cat, name)), []).append((t0, t1))
    total: dict[str, float] = {}
    for (_, act), items in per.items():
        items.sort()
        busy, cur0, cur1 = 0.0, None, None
        for t0, t1 in items:
            if cur1 is not None and t0 <= cur1:
                cur1 = max(cur1, t1)
                continue
            if cur1 is not None:
                busy += cur1 - cur0
            cur0, cur1 = t0, t1
        busy += cur1 - cur0
        total[act] = total.get(act, 0.0) + busy
    warps = len({e[0] for e in trace})
    return {a: round(100.0 * v / (warps * end_all), 1) for a, v in sorted(total.items(), key=lambda kv: -kv[1])}
